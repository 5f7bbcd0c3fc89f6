import Foundation
import TestSupport
import Testing

/// Schedules/tvimport.service and tvimport.timer, checked by systemd's own parser.
@Suite struct SystemdUnitTests {
    /// Copies of the units in a temporary directory, ExecStart pointed at the built binary
    /// (`systemd-analyze verify` insists that the command exists and is executable).
    func unitCopies() throws -> (directory: URL, service: URL, timer: URL) {
        let dir = try temporaryDirectory()
        let service = dir.appendingPathComponent("tvimport.service"), timer = dir.appendingPathComponent("tvimport.timer")
        let text = try repoFile("Schedules/tvimport.service")
        #expect(FileManager.default.isExecutableFile(atPath: Repository.tvimport), "build first: \(Repository.tvimport) is missing")
        try text.replacingOccurrences(of: "ExecStart=/usr/local/bin/tvimport ", with: "ExecStart=\(Repository.tvimport) ")
            .write(to: service, atomically: true, encoding: .utf8)
        try repoFile("Schedules/tvimport.timer").write(to: timer, atomically: true, encoding: .utf8)
        return (dir, service, timer)
    }

    static let hasSystemdAnalyze = which("systemd-analyze") != nil

    @Test(.enabled(if: hasSystemdAnalyze, "needs systemd-analyze (scripts/install-deps installs systemd)"))
    func theUnitsPassSystemdAnalyzeVerify() throws {
        let analyze = try #require(which("systemd-analyze"))
        let (dir, service, timer) = try unitCopies()
        defer { try? FileManager.default.removeItem(at: dir) }
        let result = try run(analyze, ["verify", "--man=no", service.path, timer.path])
        #expect(result.status == 0, "systemd-analyze verify failed:\n\(result.output)")
        // Unknown keys and bad values are only warnings (exit 0): any message about our units fails.
        let complaints = result.output.split(separator: "\n").filter { $0.contains("tvimport.service") || $0.contains("tvimport.timer") }
        #expect(complaints.isEmpty, "systemd-analyze verify complains:\n\(complaints.joined(separator: "\n"))")
    }

    @Test(.enabled(if: hasSystemdAnalyze, "needs systemd-analyze (scripts/install-deps installs systemd)"))
    func theServiceIsWellHardened() throws {
        let analyze = try #require(which("systemd-analyze"))
        let (dir, service, _) = try unitCopies()
        defer { try? FileManager.default.removeItem(at: dir) }
        // Exposure 0.0 (locked down) ... 10.0 (unprotected); the threshold is in tenths: at most 2.0 ("OK").
        let result = try run(analyze, ["security", "--offline=yes", "--no-pager", "--threshold=20", service.path])
        #expect(result.status == 0, "exposure above 2.0:\n\(result.output.split(separator: "\n").suffix(3).joined(separator: "\n"))")
    }

    @Test func theServiceRunsTheNightlyJobAsADedicatedUser() throws {
        let s = Dictionary(unitSettings(try repoFile("Schedules/tvimport.service"), section: "Service").map { ($0.key, $0.value) },
                           uniquingKeysWith: { a, b in a + " " + b })
        #expect(s["Type"] == "oneshot")
        #expect(s["ExecStart"] == "/usr/local/bin/tvimport run --config /etc/tvimport/config.json --quiet")
        #expect(s["User"] == "tvimport")
        #expect(s["SuccessExitStatus"] == nil, "75 (locked) is a soft failure, not a success")
        for (key, value) in [("ProtectSystem", "strict"), ("NoNewPrivileges", "yes"), ("PrivateTmp", "yes"), ("ProtectHome", "yes"),
                             ("ProtectKernelTunables", "yes"), ("ProtectKernelModules", "yes"), ("ProtectKernelLogs", "yes"),
                             ("RestrictAddressFamilies", "AF_INET AF_INET6 AF_UNIX"), ("CapabilityBoundingSet", ""),
                             ("ReadWritePaths", "/var/lib/tvimport /var/cache/tvimport /var/www/tv"),
                             ("StateDirectory", "tvimport"), ("CacheDirectory", "tvimport")] {
            #expect(s[key] == value, "\(key)=\(value) expected, found \(s[key] ?? "nothing")")
        }
        #expect(s["SystemCallFilter"]?.hasPrefix("@system-service") == true)
        // The example config writes where the service may write.
        let config = try JSONSerialization.jsonObject(with: Data(try repoFile("Schedules/config.example.json").utf8)) as? [String: Any]
        let writable = (s["ReadWritePaths"] ?? "").split(separator: " ").map(String.init)
        for key in ["database", "output", "cache"] {
            let path = config?[key] as? String ?? ""
            #expect(writable.contains { path == $0 || path.hasPrefix($0 + "/") }, "config \(key) \(path) is not in ReadWritePaths")
        }
    }

    @Test func theTimerFiresNightlyWithJitter() throws {
        let t = Dictionary(unitSettings(try repoFile("Schedules/tvimport.timer"), section: "Timer").map { ($0.key, $0.value) },
                           uniquingKeysWith: { a, _ in a })
        #expect(t["OnCalendar"] == "*-*-* 03:00")
        #expect(t["Persistent"] == "true")
        #expect(t["RandomizedDelaySec"] == "45m")
        #expect(unitSettings(try repoFile("Schedules/tvimport.timer"), section: "Install").contains { $0.key == "WantedBy" && $0.value == "timers.target" })
        if let analyze = which("systemd-analyze") {
            let next = try run(analyze, ["calendar", "*-*-* 03:00"])
            #expect(next.status == 0 && next.stdout.contains("03:00:00"), "\(next.output)")
        }
    }
}

/// Schedules/crontab: one job line, installed with a random minute substituted for @MINUTE@.
@Suite struct CrontabTests {
    /// The install command documented in the file, as a POSIX shell runs it.
    func installedForm() throws -> String {
        let text = try repoFile("Schedules/crontab")
        let documented = text.split(separator: "\n").first { $0.contains("shuf -i 0-59") && $0.contains("sed") }
        #expect(documented != nil, "the crontab must document its install command with a random minute")
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("crontab")
        try text.write(to: source, atomically: true, encoding: .utf8)
        let result = try run("/bin/sh", ["-c", "sed \"s/@MINUTE@/$(shuf -i 0-59 -n 1)/\" \"$1\"", "sh", source.path])
        #expect(result.status == 0, "\(result.output)")
        return result.stdout
    }

    /// The job lines: not comments, blank lines or NAME=value environment settings.
    func jobLines(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { line in
            guard !line.isEmpty, !line.hasPrefix("#") else { return false }
            if let eq = line.firstIndex(of: "="), !line[..<eq].contains(" ") { return false }
            return true
        }
    }

    @Test func theTemplateHasOneJobWithTheMinutePlaceholder() throws {
        let jobs = jobLines(try repoFile("Schedules/crontab"))
        #expect(jobs.count == 1)
        #expect(jobs.first?.hasPrefix("@MINUTE@ 3 * * * ") == true, "\(jobs)")
    }

    @Test(arguments: 0..<5) func theInstalledLineIsAValidNightlyCronLine(_ attempt: Int) throws {
        let jobs = jobLines(try installedForm())
        try #require(jobs.count == 1, "\(jobs)")
        let fields = jobs[0].split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true).map(String.init)
        try #require(fields.count == 6, "five time fields and a command: \(jobs[0])")
        let minute = try #require(Int(fields[0]), "minute \(fields[0]) is not a number")
        #expect((0...59).contains(minute))
        #expect(!fields[0].contains("@"))
        #expect(fields[1] == "3")
        #expect(Array(fields[2...4]) == ["*", "*", "*"])
        #expect(fields[5] == "/usr/local/bin/tvimport run --config /etc/tvimport/config.json --quiet")
        #expect(!jobs[0].contains("flock"), "tvimport locks itself")
    }
}
