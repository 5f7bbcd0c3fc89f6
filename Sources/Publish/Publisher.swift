import Fetch
import Foundation

/// What a publish did (or, dry, would do).
public struct PublishReport: Sendable {
    public var target: ObjectStoreTarget
    public var dryRun = false
    /// The bucket was listed and compared (`--verify`, or no state of this target yet).
    public var listed = false
    /// Keys uploaded, in the order they went up (feeds and guide, then the index).
    public var uploaded: [String] = []
    /// Keys deleted (feeds that no longer exist), after the index.
    public var deleted: [String] = []
    public var unchanged = 0
    /// Files of the export directory left alone (LocalObject.scan), each with its reason.
    public var skipped: [SkippedFile] = []
    /// HTTP requests sent to the store, retries and listing pages included.
    public var requests = 0

    /// One line for the run's report, the names too on a dry run; then what was skipped.
    public var summary: String {
        skipped.isEmpty ? outcome : outcome + "\npublish: skipped \(skipped.map(\.description).joined(separator: ", "))"
    }

    private var outcome: String {
        let place = "\(target.displayName)\(target.prefix.isEmpty ? "" : " under \(target.prefix)")"
        if dryRun {
            var lines = ["publish (dry run): would upload \(uploaded.count), delete \(deleted.count), leave \(unchanged) unchanged in \(place)"]
            lines += uploaded.map { "  upload \($0)" } + deleted.map { "  delete \($0)" }
            return lines.joined(separator: "\n")
        }
        if uploaded.isEmpty && deleted.isEmpty {
            return "publish: nothing changed in \(place) (\(unchanged) objects\(listed ? ", bucket listed and compared" : ""))"
        }
        return "publish: \(uploaded.count) uploaded, \(deleted.count) deleted, \(unchanged) unchanged in \(place) (\(requests) requests)"
    }
}

/// Publishes an export directory to an S3-compatible bucket: only what changed, feeds (and the
/// XMLTV export) before the index that links them, deletes of gone feeds after the new index is
/// up. The state of the last publish (PublishState) tells what changed without asking the store;
/// `verify` (and a first publish) list the bucket instead and repair any difference. A failure
/// stops the publish, keeps the state of what did go up, and throws: the next run sends the rest.
public struct Publisher: Sendable {
    public var target: ObjectStoreTarget
    /// Retries, backoff and time budget of each request (the fetch policy of the config).
    public var policy: FetchPolicy
    /// Where the state of the last publish is kept (a file of the fetch cache).
    public var statePath: String
    /// Requests in flight at once.
    public var workers = 4

    public init(target: ObjectStoreTarget, policy: FetchPolicy, statePath: String) {
        self.target = target
        self.policy = policy
        self.statePath = statePath
    }

    /// Publishes `objects`. `credentials` is asked for only when the store is contacted (a dry
    /// run without `verify` reads nothing but the local files and the state).
    ///
    /// A real publish asks for them first, even when nothing changed: missing credentials are a
    /// configuration error (78) on the night they go missing, not on the night a feed changes.
    public func publish(
        _ objects: [LocalObject], skipped: [SkippedFile] = [], verify: Bool = false, dryRun: Bool = false,
        credentials: () throws(PublishError) -> ObjectStoreCredentials
    ) throws(PublishError) -> PublishReport {
        var report = PublishReport(target: target, dryRun: dryRun)
        report.skipped = skipped
        var known: ObjectStoreCredentials? = dryRun ? nil : try credentials()
        func credentialsOnce() throws(PublishError) -> ObjectStoreCredentials {
            if let known { return known }
            let fresh = try credentials()
            known = fresh
            return fresh
        }
        let previous = PublishState.load(path: statePath, target: target)
        let state = SharedState(previous ?? PublishState(target: PublishState.identity(of: target)))
        let listing = verify || (previous == nil && !dryRun)

        var client: ObjectStoreClient?
        var remote: [String: String]?
        if listing {
            let c = try ObjectStoreClient(target: target, credentials: try credentialsOnce(), policy: policy)
            remote = try c.list()
            client = c
            report.listed = true
        }

        // What changed: against the listing when there is one, else against the state.
        var uploads: [PendingUpload] = []
        var localKeys = Set<String>()
        for object in objects {
            let key = target.key(for: object.name)
            localKeys.insert(key)
            let stamp = try FileStamp(path: object.path)
            let known = state.value.objects[key]
            if remote == nil, let known, known.size == stamp.size, known.modified == stamp.modified {
                report.unchanged += 1
                continue
            }
            let digests = try FileDigests(file: object.path)
            let stored = remote.map { $0[key] } ?? known?.md5
            if stored == digests.md5Hex {
                report.unchanged += 1
                state.value.objects[key] = .init(md5: digests.md5Hex, size: digests.bytes, modified: stamp.modified)
            } else {
                uploads.append(PendingUpload(key: key, object: object, digests: digests, modified: stamp.modified))
            }
        }
        var deletes = state.value.objects.keys.filter { !localKeys.contains($0) }
        if let remote {
            deletes = Array(Set(deletes).union(remote.keys.filter { !localKeys.contains($0) && isDeletable($0) }))
        }
        deletes.sort()
        // Feeds and the guide first, the index after them.
        let (first, last) = (uploads.filter { $0.object.kind != .index }, uploads.filter { $0.object.kind == .index })

        if dryRun {
            report.uploaded = (first + last).map(\.key)
            report.deleted = deletes
            report.requests = client?.requests ?? 0
            return report
        }
        let requestsBefore = client?.requests ?? 0
        var failure: PublishError?
        var requests = requestsBefore
        if !(first.isEmpty && last.isEmpty && deletes.isEmpty) {
            let credentials = try credentialsOnce()
            for phase in [first.map(Job.upload), last.map(Job.upload), deletes.map(Job.delete)] where failure == nil {
                let outcome = run(phase, credentials: credentials, state: state)
                requests += outcome.requests
                failure = outcome.failure
                for job in outcome.done {
                    switch job {
                    case .upload(let u): report.uploaded.append(u.key)
                    case .delete(let key): report.deleted.append(key)
                    }
                }
            }
        }
        report.requests = requests
        if previous != state.value || failure != nil { try state.value.save(path: statePath) }
        if var failure {
            let pending = uploads.count + deletes.count - report.uploaded.count - report.deleted.count
            failure.message += "; \(report.uploaded.count) uploaded and \(report.deleted.count) deleted before it, \(pending) left for the next run"
            throw failure
        }
        return report
    }

    /// Keys under the prefix that a verify may delete when no local file has them: feeds only, so
    /// that anything else kept under the prefix survives.
    private func isDeletable(_ key: String) -> Bool {
        guard key.hasPrefix(target.prefix) else { return false }
        let name = key.dropFirst(target.prefix.count)
        return !name.contains("/") && name.hasSuffix(".ics")
    }

    struct PendingUpload: Sendable {
        var key: String
        var object: LocalObject
        var digests: FileDigests
        var modified: Int64
    }

    enum Job: Sendable {
        case upload(PendingUpload)
        case delete(String)
    }

    /// Runs one phase with `workers` connections; the first failure stops the others taking work.
    private func run(_ jobs: [Job], credentials: ObjectStoreCredentials, state: SharedState)
        -> (done: [Job], failure: PublishError?, requests: Int)
    {
        guard !jobs.isEmpty else { return ([], nil, 0) }
        let queue = SharedQueue(jobs)
        let target = target, policy = policy
        DispatchQueue.concurrentPerform(iterations: min(workers, jobs.count)) { _ in
            let client: ObjectStoreClient
            do throws(PublishError) {
                client = try ObjectStoreClient(target: target, credentials: credentials, policy: policy)
            } catch {
                queue.fail(error)
                return
            }
            defer { queue.count(requests: client.requests) }
            while let job = queue.next() {
                do throws(PublishError) {
                    switch job {
                    case .upload(let u):
                        let upload = StoreConnection.Upload(path: u.object.path, digests: u.digests, contentType: u.object.kind.contentType,
                                                            cacheControl: target.cacheControl ?? u.object.kind.defaultCacheControl)
                        try client.put(key: u.key, upload)
                        state.set(u.key, .init(md5: u.digests.md5Hex, size: u.digests.bytes, modified: u.modified))
                    case .delete(let key):
                        try client.delete(key: key)
                        state.set(key, nil)
                    }
                    queue.finished(job)
                } catch {
                    queue.fail(error)
                }
            }
        }
        return queue.result
    }
}

/// Size and modification time of a local file.
struct FileStamp {
    var size: Int64
    var modified: Int64

    init(path: String) throws(PublishError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw PublishError(.localFile, "\(path): cannot be read: \(String(cString: strerror(errno)))")
        }
        size = Int64(info.st_size)
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
    }
}

/// The publish state, updated by the workers as each request succeeds.
private final class SharedState: @unchecked Sendable {
    private let lock = NSLock()
    private var _value: PublishState

    init(_ value: PublishState) { _value = value }

    var value: PublishState {
        get { lock.withLock { _value } }
        set { lock.withLock { _value = newValue } }
    }

    func set(_ key: String, _ object: PublishState.Object?) {
        lock.withLock { _value.objects[key] = object }
    }
}

/// The jobs of one phase, handed out one at a time, with what came of them.
private final class SharedQueue: @unchecked Sendable {
    private let lock = NSLock()
    private let jobs: [Publisher.Job]
    private var nextIndex = 0
    private var done: [Publisher.Job] = []
    private var failure: PublishError?
    private var requests = 0

    init(_ jobs: [Publisher.Job]) { self.jobs = jobs }

    func next() -> Publisher.Job? {
        lock.withLock {
            guard failure == nil, nextIndex < jobs.count else { return nil }
            defer { nextIndex += 1 }
            return jobs[nextIndex]
        }
    }

    func finished(_ job: Publisher.Job) { lock.withLock { done.append(job) } }
    func fail(_ error: PublishError) { lock.withLock { if failure == nil { failure = error } } }
    func count(requests more: Int) { lock.withLock { requests += more } }

    var result: (done: [Publisher.Job], failure: PublishError?, requests: Int) {
        lock.withLock { (done, failure, requests) }
    }
}
