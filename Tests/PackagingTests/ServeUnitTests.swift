import Foundation
import TestSupport
import Testing

/// Schedules/tvimport-serve.service, checked by systemd's own parser and its security score.
@Suite(.enabled(if: which("systemd-analyze") != nil, "needs systemd-analyze (scripts/install-deps installs systemd)"))
struct ServeUnitTests {
    func unitCopy() throws -> (directory: URL, service: URL) {
        let dir = try temporaryDirectory()
        let service = dir.appendingPathComponent("tvimport-serve.service")
        #expect(FileManager.default.isExecutableFile(atPath: Repository.tvimport), "build first: \(Repository.tvimport) is missing")
        try repoFile("Schedules/tvimport-serve.service")
            .replacingOccurrences(of: "ExecStart=/usr/local/bin/tvimport ", with: "ExecStart=\(Repository.tvimport) ")
            .write(to: service, atomically: true, encoding: .utf8)
        return (dir, service)
    }

    @Test func theServeUnitPassesSystemdAnalyzeVerify() throws {
        let (dir, service) = try unitCopy()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try run(which("systemd-analyze")!, ["verify", "--man=no", service.path])
        #expect(result.status == 0, "systemd-analyze verify failed:\n\(result.output)")
        let complaints = result.output.split(separator: "\n").filter { $0.contains("tvimport-serve.service") }
        #expect(complaints.isEmpty, "systemd-analyze verify complains:\n\(complaints.joined(separator: "\n"))")
    }

    @Test func theServeUnitIsWellHardened() throws {
        let (dir, service) = try unitCopy()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Exposure 0.0 (locked down) ... 10.0 (unprotected): at most 2.0 ("OK"), like the nightly unit.
        let result = try run(which("systemd-analyze")!, ["security", "--offline=yes", "--no-pager", "--threshold=20", service.path])
        #expect(result.status == 0, "exposure above 2.0:\n\(result.output.split(separator: "\n").suffix(3).joined(separator: "\n"))")
    }

    @Test func theServeUnitServesAsTheJobsUser() throws {
        let s = Dictionary(unitSettings(try repoFile("Schedules/tvimport-serve.service"), section: "Service").map { ($0.key, $0.value) },
                           uniquingKeysWith: { a, b in a + " " + b })
        #expect(s["ExecStart"] == "/usr/local/bin/tvimport serve --config /etc/tvimport/config.json")
        #expect(s["User"] == "tvimport")
        #expect(s["ProtectSystem"] == "strict")
        #expect(s["ReadWritePaths"] == "/var/lib/tvimport")
        #expect(s["CapabilityBoundingSet"] == "")
    }
}
