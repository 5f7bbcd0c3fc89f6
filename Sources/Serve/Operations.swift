import Foundation
import Hummingbird
import Job
import ObjectGraph
import Primitives
import Prometheus

/// The server's own counters and the request latency histogram (swift-prometheus).
final class ServeMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let requestDuration: DurationHistogram
    private let edits: Counter
    private let failedEdits: Counter
    private let feedCompressions: Counter
    private let plainAnswers: Counter

    init() {
        requestDuration = registry.makeDurationHistogram(
            name: "tvimport_serve_request_duration_seconds",
            buckets: [.milliseconds(1), .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(500), .seconds(2)],
            help: "Time to answer a request.")
        edits = registry.makeCounter(name: "tvimport_serve_edits_total", labels: [("outcome", "saved")], help: "Edits saved or refused.")
        failedEdits = registry.makeCounter(name: "tvimport_serve_edits_total", labels: [("outcome", "refused")], help: "Edits saved or refused.")
        feedCompressions = registry.makeCounter(name: "tvimport_serve_feed_compressions_total", labels: [],
                                                help: "Feed files gzipped: once per new content, never per request.")
        plainAnswers = registry.makeCounter(name: "tvimport_serve_plain_feed_answers_total", labels: [],
                                            help: "Feed requests answered from the connection's bytes, before the HTTP parser (PlainFeedFastPath).")
        var counters: [Int: Counter] = [:]
        for status in [200, 303, 304, 400, 401, 403, 404, 409, 413, 500, 503] {
            counters[status] = registry.makeCounter(name: "tvimport_serve_requests_total", labels: [("code", String(status))], help: "Requests answered, by status.")
        }
        requestCounters = counters
    }

    /// The request counters of the usual statuses, made once: looking one up in the registry on
    /// every request (a lock, a string, a dictionary) was a cost of its own under load.
    private let requestCounters: [Int: Counter]

    func observe(status: Int, duration: Duration) {
        requestDuration.record(duration)
        (requestCounters[status] ?? requestCounter(status)).increment()
    }

    private func requestCounter(_ status: Int) -> Counter {
        registry.makeCounter(name: "tvimport_serve_requests_total", labels: [("code", String(status))], help: "Requests answered, by status.")
    }

    func countEdit(failed: Bool) { (failed ? failedEdits : edits).increment() }
    func countFeedCompression() { feedCompressions.increment() }
    func countPlainAnswer() { plainAnswers.increment() }
}

/// `/healthz` and `/metrics`, from the run log beside the database (Sources/Job/StoreAccess.swift,
/// `RunLog`) and counts read through the server's connection.
struct Operations: Sendable {
    let state: ServeState

    /// The last run that was not a dry run or a read, if any.
    func lastRun() async throws -> RunLog.Entry? {
        let database = state.options.database
        return try await BlockingWork.run {
            RunLog.last(database: database, limit: 50).first { !$0.dryRun && ($0.command == "run" || $0.command == "import") }
        }
    }

    /// 200 when the last run succeeded and finished less than `healthMaxAgeSeconds` ago, else 503,
    /// with one line saying why.
    func health() async throws -> Response {
        let now = Int64(Date().timeIntervalSince1970)
        guard let run = try await lastRun() else { return Pages.text("no run recorded yet\n", status: .serviceUnavailable) }
        // The run log is ours, but a damaged one must not trap here: a difference out of range is "long ago".
        let (age, overflow) = now.subtractingReportingOverflow(run.finished)
        if run.exitCode != 0 {
            return Pages.text("last \(run.command) failed (exit \(run.exitCode)) at \(UTCTime.iso8601(run.finished)): \(run.outcome)\n", status: .serviceUnavailable)
        }
        if overflow || age > state.options.healthMaxAgeSeconds {
            return Pages.text("last successful \(run.command) finished \(age / 3600) h ago, at \(UTCTime.iso8601(run.finished))\n", status: .serviceUnavailable)
        }
        return Pages.text("ok: last \(run.command) succeeded at \(UTCTime.iso8601(run.finished))\n")
    }

    /// Prometheus text: the last run of each command (time, duration, exit code), object counts
    /// per entity and per source, and the server's own metrics.
    func metrics() async throws -> Response {
        let registry = state.metrics.registry
        var latest: [String: RunLog.Entry] = [:]
        let database = state.options.database
        for entry in try await BlockingWork.run({ RunLog.last(database: database, limit: 200) }) where !entry.dryRun && latest[entry.command] == nil {
            latest[entry.command] = entry
        }
        for (command, entry) in latest {
            let labels = [("command", command)]
            registry.makeGauge(name: "tvimport_last_run_timestamp_seconds", labels: labels, help: "When the last run of each command finished.").set(Double(entry.finished))
            registry.makeGauge(name: "tvimport_last_run_duration_seconds", labels: labels, help: "How long the last run of each command took.").set(Double(entry.finished) - Double(entry.started))
            registry.makeGauge(name: "tvimport_last_run_exit_code", labels: labels, help: "The exit code of the last run of each command (0: success).").set(Double(entry.exitCode))
        }
        let model = state.model
        let (counts, bySource) = try await state.reads.read { context -> ([String: Int], [String: [String: Int]]) in
            var counts: [String: Int] = [:]
            for entity in model.entities { counts[entity.name] = try context.count(entity.name) }
            var bySource: [String: [String: Int]] = [:]
            for entity in model.entities where entity.parent == nil && entity.attribute("source") != nil {
                for source in try sources(of: entity, context) {
                    bySource[source, default: [:]][entity.name] = try context.count(entity.name, where: .compare("source", .equal, .string(source)))
                }
            }
            return (counts, bySource)
        }
        for (entity, count) in counts {
            registry.makeGauge(name: "tvimport_objects", labels: [("entity", entity)], help: "Stored objects per entity.").set(Double(count))
        }
        for (source, entities) in bySource {
            for (entity, count) in entities {
                registry.makeGauge(name: "tvimport_source_objects", labels: [("source", source), ("entity", entity)],
                                   help: "Stored objects per source and entity.").set(Double(count))
            }
        }
        return Pages.text(registry.emitToString(), type: "text/plain; version=0.0.4; charset=utf-8")
    }

    /// The distinct sources of an entity's objects (few: one per configured source).
    private func sources(of entity: Entity, _ context: ObjectContext) throws -> [String] {
        var found: [String] = []
        var last: Value = .null
        // Sorted by source, each distinct value read once (the column is indexed on Programme).
        while let next = try context.fetch(entity.name, where: last.isNull ? .compare("source", .notEqual, .null) : .compare("source", .greater, last),
                                           orderBy: [SortKey("source")], keys: ["source"], limit: 1).next(),
              case .string(let source) = next["source"] {
            found.append(source)
            last = .string(source)
            if found.count > 1000 { break }
        }
        return found
    }
}
