import Foundation
import TestSupport
import Testing

/// Schedules/healthcheck against real databases made by the built binary.
@Suite struct HealthcheckTests {
    let healthcheck = repoRoot.appendingPathComponent("Schedules/healthcheck").path

    func check(_ database: URL, _ extra: [String: String] = [:]) throws -> RunResult {
        try run(healthcheck, [database.path], environment: ["TVIMPORT_BIN": Repository.tvimport].merging(extra) { _, new in new })
    }

    @Test func healthyAfterARunUnhealthyAfterAFailedImportOrWhenStale() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = dir.appendingPathComponent("tvimport.sqlite")

        #expect(try check(database).status == 1, "no database yet: unhealthy")

        // Tonight's run on the bundled sample guide (no network).
        let nightly = try run(Repository.tvimport, ["run", "--quiet"], in: dir)
        try #require(nightly.status == 0, "\(nightly.output)")
        let healthy = try check(database)
        #expect(healthy.status == 0, "\(healthy.output)")
        #expect(healthy.stdout.hasPrefix("healthy"))

        // Too old: any age is more than -1 s.
        let stale = try check(database, ["TVIMPORT_HEALTH_MAX_AGE": "-1"])
        #expect(stale.status == 1, "\(stale.output)")

        // A failed last run: malformed XMLTV, exit 65, recorded in the run log.
        let broken = dir.appendingPathComponent("broken.xml")
        try #"<?xml version="1.0"?><tv><channel id="x"><display-name>X</display-name></channel><programme"#
            .write(to: broken, atomically: true, encoding: .utf8)
        let failed = try run(Repository.tvimport, ["import", "--db", database.path, broken.path], in: dir)
        #expect(failed.status == 65, "\(failed.output)")
        let unhealthy = try check(database)
        #expect(unhealthy.status == 1, "\(unhealthy.output)")
        #expect(unhealthy.stdout.contains("exited 65"), "\(unhealthy.output)")

        // The next good run makes it healthy again.
        #expect(try run(Repository.tvimport, ["run", "--quiet"], in: dir).status == 0)
        #expect(try check(database).status == 0)
    }

    @Test func theDatabaseComesFromTheEnvironmentLikeInTheImage() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = dir.appendingPathComponent("elsewhere.sqlite")
        let env = ["TVIMPORT_DB": database.path, "TVIMPORT_OUTPUT": dir.appendingPathComponent("feeds").path]
        #expect(try run(Repository.tvimport, ["run", "--quiet"], in: dir, environment: env).status == 0)
        let result = try run(healthcheck, [], environment: env.merging(["TVIMPORT_BIN": Repository.tvimport]) { _, new in new })
        #expect(result.status == 0, "\(result.output)")
    }

    /// `tvimport status` fails with "database is locked" while a run holds the write lock: the
    /// check waits for the lock instead of reporting a healthy job as failed.
    @Test func aRunHoldingTheLockDoesNotMakeItUnhealthy() throws {
        let sqlite3 = try #require(which("sqlite3"), "install sqlite3 (scripts/install-deps)")
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = dir.appendingPathComponent("tvimport.sqlite")
        try #require(try run(Repository.tvimport, ["run", "--quiet"], in: dir).status == 0)

        // A writer that holds the lock for 3 s, like an import's transaction.
        let writer = try RunningProcess("/bin/sh", ["-c", "(echo 'BEGIN IMMEDIATE;'; echo 'SELECT 1;'; sleep 3; echo 'COMMIT;') | \"$1\" \"$2\" >/dev/null", "sh", sqlite3, database.path])
        Thread.sleep(forTimeInterval: 0.7)
        let locked = try run(Repository.tvimport, ["status", "--db", database.path])
        let result = try check(database)
        writer.waitForExit()
        if locked.status == 0 { return } // status no longer needs the write lock: nothing to wait for
        #expect(result.status == 0, "\(result.output)")
        #expect(try check(database, ["TVIMPORT_HEALTH_LOCK_WAIT": "0"]).status == 0, "unlocked now")
    }

    @Test(.enabled(if: which("dash") ?? which("sh") != nil, "needs dash or sh"))
    func theScriptsArePOSIXShell() throws {
        let dash = try #require(which("dash") ?? which("sh"))
        for script in ["Schedules/healthcheck", "Schedules/container-nightly"] {
            let result = try run(dash, ["-n", repoRoot.appendingPathComponent(script).path])
            #expect(result.status == 0, "\(script): \(result.output)")
            #expect(FileManager.default.isExecutableFile(atPath: repoRoot.appendingPathComponent(script).path), "\(script) is not executable")
        }
    }
}

/// Schedules/container-nightly, the image's schedule loop, with a stand-in tvimport on PATH.
@Suite struct ContainerScheduleTests {
    let script = repoRoot.appendingPathComponent("Schedules/container-nightly").path

    @Test func withoutAConfigItStopsWithExit78() throws {
        let result = try run(script, [], environment: ["TVIMPORT_CONFIG": "/nonexistent/config.json"])
        #expect(result.status == 78)
        #expect(result.stderr.contains("/nonexistent/config.json"))
    }

    @Test func itRunsOnceAtStartThenWaitsForTheNextNightAndStopsOnSIGTERM() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bin = dir.appendingPathComponent("bin"), log = dir.appendingPathComponent("calls")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let fake = bin.appendingPathComponent("tvimport")
        try "#!/bin/sh\necho \"$*\" >> \(log.path)\nexit 69\n".write(to: fake, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: fake.path)
        let config = dir.appendingPathComponent("config.json")
        try "{}".write(to: config, atomically: true, encoding: .utf8)

        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let process = try RunningProcess(script, [], environment: ["PATH": path, "TVIMPORT_CONFIG": config.path])
        // Wait (at most 10 s) until it has run once and announced the next run.
        func output() -> String { process.stdout + process.stderr }
        process.wait(timeout: 10) { _ in output().contains("next run in") }
        let text = output()
        #expect(process.isRunning, "a failed run must not stop the loop:\n\(text)")
        #expect(process.stop() == 0, "docker stop ends it cleanly")
        #expect(text.contains("with exit code 69"), "\(text)")
        #expect(try String(contentsOf: log, encoding: .utf8) == "run --config \(config.path)\n")
        // The next run is tomorrow's (or today's) 03:00 plus at most 45 minutes.
        let seconds = text.split(separator: "\n").first { $0.contains("next run in") }
            .flatMap { $0.split(separator: " ").drop { $0 != "in" }.dropFirst().first }.flatMap { Int($0) }
        let delay = try #require(seconds, "\(text)")
        #expect(delay > 0 && delay <= 24 * 3600 + 2700, "\(delay) s")
    }
}
