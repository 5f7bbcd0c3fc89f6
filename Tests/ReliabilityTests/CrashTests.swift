import Foundation
import TestSupport
import Testing

/// The quick version of scripts/crash-test: a few SIGKILLs of a running import (of a whole `run`,
/// import and export, of a second source's import that makes channels shared, and of a re-import
/// of a shared channel's source), each leaving an intact database in the state before or after it.
/// It generates its guides with `../shared/tools/xmltvgen.py`: without it the suite is skipped.
@Suite(.serialized, .enabled(if: Shared.hasGenerator, "needs ../shared/tools/xmltvgen.py and python3"))
struct CrashTests {

    func crashTest(_ args: [String]) throws -> Outcome {
        guard FileManager.default.isExecutableFile(atPath: Repository.tvimport) else {
            Issue.record("\(BinaryMissing())")
            throw BinaryMissing()
        }
        return try runProcess(repoRoot.appendingPathComponent("scripts/crash-test").path, args, in: repoRoot,
                              timeout: 600, environment: ["TVIMPORT_BIN": Repository.tvimport])
    }

    @Test func killedImportsLeaveTheStateBeforeOrAfter() throws {
        let r = try crashTest(["5", "--channels", "30", "--days", "2"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("5 kills"), "\(r.stdout)")
    }

    @Test func killedRunsLeaveTheStateBeforeOrAfterAndWholeFeeds() throws {
        let r = try crashTest(["3", "--mode", "run", "--channels", "30", "--days", "2"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("3 kills"), "\(r.stdout)")
    }

    /// A second source's first import of the same channels makes them shared (the first source's
    /// rows copied, the shown guide resolved): killed anywhere, it leaves the state before or after.
    @Test func killedSecondSourcesLeaveTheStateBeforeOrAfter() throws {
        let r = try crashTest(["3", "--mode", "second-source", "--channels", "20", "--days", "2"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("3 kills"), "\(r.stdout)")
    }

    /// A re-import of a source whose channels another source shares resolves each channel's shown
    /// programmes as its block is merged, inside the import's one transaction: killed anywhere, it
    /// leaves the state before or after.
    @Test func killedReimportsOfSharedChannelsLeaveTheStateBeforeOrAfter() throws {
        let r = try crashTest(["3", "--mode", "shared", "--channels", "20", "--days", "2"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("3 kills"), "\(r.stdout)")
    }

    /// The first import into an empty store runs with a rollback journal (docs/design.md#the-first-import):
    /// killed anywhere, it leaves the empty store or the imported one, and nothing beside it.
    @Test func killedFirstImportsLeaveTheEmptyStoreOrTheImportedOne() throws {
        let r = try crashTest(["3", "--mode", "first", "--strict-leftovers", "--channels", "30", "--days", "2"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("3 kills"), "\(r.stdout)")
    }

    /// `undo` reverts an import in one transaction that also marks it undone: killed anywhere, it
    /// leaves the state before the undo or after it, and an undo that did not commit can be run again.
    @Test func killedUndosLeaveTheStateBeforeOrAfter() throws {
        let r = try crashTest(["3", "--mode", "undo", "--channels", "30", "--days", "2"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("3 kills"), "\(r.stdout)")
    }

    @Test func concurrentImportsSerialise() throws {
        let r = try crashTest(["0", "--concurrent", "3", "--channels", "20", "--days", "2"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
        #expect(r.stdout.contains("3 concurrent pairs"), "\(r.stdout)")
    }

    /// A killed import leaves `<db>.before-<pid>` (with -wal and -shm: the copy of the database
    /// taken for the change file) beside the database, and no later import removes it: every
    /// killed nightly run leaks a full copy of the database.
    @Test
    func killedImportsLeaveNothingBehind() throws {
        let r = try crashTest(["3", "--strict-leftovers", "--channels", "30", "--days", "2"])
        #expect(r.status == 0, "\(r.stdout)\n\(r.stderr)")
    }
}
