import Job
import ObjectGraph
import Testing

/// A busy database is a temporary failure (exit 75, try again), not bad data (65): the commands
/// and serve's edit, undo and redo map the store's error through `JobError.init?(_:)`.
@Suite struct BusyDatabaseTests {
    @Test func aBusyStoreIsATemporaryFailureAndOtherErrorsAreNotMapped() throws {
        let busy = try #require(JobError(StoreError.busy(path: "/srv/tv.sqlite", seconds: 30)))
        #expect(busy.status == .tempFail)
        #expect(busy.message.contains("/srv/tv.sqlite") && busy.message.contains("30 s"))
        #expect(JobError(StoreError.cannotOpen(path: "/srv/tv.sqlite", reason: "no")) == nil)
        #expect(JobError(JobError(.usage, "x")) == nil)
    }
}
