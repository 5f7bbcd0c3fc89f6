import Foundation
import TestSupport
import Testing
@testable import Fetch

/// The guide every 200 scenario of Fixtures/server.py serves.
let guide = Data("""
    <?xml version="1.0" encoding="UTF-8"?>
    <tv generator-info-name="fetch-tests">
      <channel id="one.test"><display-name>One</display-name></channel>
    </tv>

    """.utf8)

/// Fixtures/server.py in a subprocess, on a free loopback port. One per test: no shared state.
final class TestServer {
    private let process: RunningProcess
    let port: Int

    init() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/server.py").path
        // The server runs until its standard input closes.
        let process = try RunningProcess("python3", [script], keepsInputOpen: true)
        self.process = process
        process.wait(timeout: 60) { $0.stdout.contains("\n") }
        guard let port = Int(process.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.stop()
            throw TestServerError.noPort
        }
        self.port = port
    }

    deinit { stop() }

    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// How often `path` was requested so far.
    func hits(_ path: String) throws -> Int {
        // Foundation here has no HTTP client without FoundationNetworking: ask through Fetch itself.
        let directory = try CacheDirectory()
        defer { directory.remove() }
        let outcome = try directory.fetcher.fetch(FetchRequest(url: url("/hits" + path), policy: testPolicy(retries: 0)))
        guard case .downloaded(let answer) = outcome else { return -1 }
        let text = try String(contentsOfFile: answer.file, encoding: .utf8)
        return Int(text.filter(\.isNumber)) ?? -1
    }

    func stop() {
        guard process.isRunning else { return }
        process.closeInput()
        process.stop()
    }
}

enum TestServerError: Error { case noPort }

/// A fresh cache directory, removed by `remove()`.
struct CacheDirectory {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory
            .appendingPathComponent("fetch-tests-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    var fetcher: Fetcher { Fetcher(cacheDirectory: path) }

    /// Everything in the directory, hidden files included.
    var contents: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Quick retries so the suite stays fast.
func testPolicy(retries: Int = 2, budget: Double = 20) -> FetchPolicy {
    FetchPolicy(retries: retries, totalBudget: budget, initialBackoff: 0.05)
}

/// The download of an outcome, recording an issue when there is none.
func download(_ outcome: FetchOutcome, sourceLocation: SourceLocation = #_sourceLocation) -> Download? {
    if case .downloaded(let download) = outcome { return download }
    Issue.record("expected a download, got \(outcome)", sourceLocation: sourceLocation)
    return nil
}

func isNotModified(_ outcome: FetchOutcome) -> Bool {
    if case .notModified = outcome { return true }
    return false
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}
