import CCurl
import Foundation
import Primitives

/// An http(s) source: attempts with backoff inside the time budget, then the content checks.
struct RemoteSource {
    var url: String
    var request: FetchRequest
    var directory: String

    private var policy: FetchPolicy { request.policy }

    /// A failed attempt, and whether another one could succeed.
    struct AttemptFailure: Error {
        var error: FetchError
        var isTransient: Bool
        /// The server's own `Retry-After`, in seconds.
        var retryAfter: Double?
        /// Nothing accepted the connection: one quick retry, no back-off (RetrySchedule).
        var quickRetryOnly = false
    }

    func fetch() throws(FetchError) -> FetchOutcome {
        // A first run may not have a cache yet; a failure to create it shows up on the first attempt.
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var schedule = RetrySchedule(policy: policy)
        while true {
            let failure: AttemptFailure
            do {
                return try attemptOnce(timeLimit: schedule.remaining)
            } catch {
                failure = error
            }
            let decision = schedule.failed(transient: failure.isTransient, retryAfter: failure.retryAfter,
                                           quickRetryOnly: failure.quickRetryOnly)
            var error = failure.error
            error.message += schedule.attemptsText
            switch decision {
            case .retry(let wait): Thread.sleep(forTimeInterval: wait)
            case .giveUp(let reason):
                error.message += reason
                throw error
            }
        }
    }

    private func attemptOnce(timeLimit: Double) throws(AttemptFailure) -> FetchOutcome {
        let sink: BodySink
        do {
            sink = try BodySink(directory: directory, maxBytes: policy.maxBytes)
        } catch {
            throw AttemptFailure(
                error: FetchError(kind: .transport, url: url,
                                  cause: "cannot create a temporary file in \(directory): \(error.reason)"),
                isTransient: false)
        }
        let sent = request.force ? nil : request.validators
        let transfer = Transfer(url: url, policy: policy, validators: sent, timeLimit: timeLimit)
        let (report, headers) = transfer.run(into: sink)
        do {
            return try judge(report, headers: headers, sink: sink, sentValidators: sent)
        } catch {
            sink.discard()
            throw error
        }
    }

    /// Turns what curl reported into an outcome or a failure. The caller discards the sink on failure.
    private func judge(
        _ report: CurlSession.Outcome, headers: ResponseHeaders, sink: BodySink, sentValidators: HTTPValidators?
    ) throws(AttemptFailure) -> FetchOutcome {
        switch sink.abort {
        case .tooLarge:
            throw fail(.tooLarge, "body is larger than the \(policy.maxBytes)-byte limit", transient: false)
        case .diskError(let number):
            throw fail(.transport, "cannot write the download to \(directory): \(String(cString: strerror(number)))",
                       transient: false)
        case .unwantedStatus, nil:
            break
        }

        let refusedBody = sink.abort == .unwantedStatus
        if report.code != CURLE_OK && !refusedBody {
            throw classify(report, headers: headers)
        }

        let status = report.status
        if status == 304 {
            guard sentValidators.map({ !$0.isEmpty }) ?? false else {
                throw fail(.http(status: 304), "server answered 304 Not Modified to an unconditional request",
                           transient: false)
            }
            sink.discard()
            return .notModified
        }
        guard (200..<300).contains(status) else {
            let reason = headers.reasonPhrase.isEmpty ? "" : " " + headers.reasonPhrase
            let transient = status == 429 || (500..<600).contains(status)
            let retryAfter = headers.retryAfter.flatMap { RetryAfter.seconds(from: $0) }
            throw fail(.http(status: status), "HTTP \(status)\(reason)", transient: transient, retryAfter: retryAfter)
        }
        if report.contentLength >= 0 && report.wireBytes != report.contentLength {
            throw fail(.truncated, "received \(report.wireBytes) of \(report.contentLength) bytes", transient: true)
        }

        do {
            try sink.finish()
        } catch {
            throw fail(.transport, "cannot write the download to \(directory): \(error.reason)", transient: false)
        }
        let compression: Compression
        switch ContentSniffer.verdict(forHead: sink.head) {
        case .accepted(let found): compression = found
        case .rejected(let reason): throw fail(.notXMLTV, "source served " + reason, transient: false)
        }
        let hash = sink.hash.hex
        if !request.force, let previous = request.previousContentHash, previous == hash {
            sink.discard()
            return .notModified
        }
        let validators = HTTPValidators(etag: headers.etag, lastModified: headers.lastModified)
        return .downloaded(Download(
            file: sink.path, validators: validators, contentHash: hash, bytes: sink.bytes,
            compression: compression))
    }

    /// Maps a libcurl error to a kind, and tells whether trying again could help.
    private func classify(
        _ report: CurlSession.Outcome,
        headers: ResponseHeaders
    ) -> AttemptFailure {
        let cause = "\(report.message) (curl error \(report.code.rawValue))"
        switch report.code {
        case CURLE_PARTIAL_FILE:
            return fail(.truncated, "transfer ended early: " + cause, transient: true)
        case CURLE_RECV_ERROR where report.status != 0:
            // The response had started: the body was cut off mid-way.
            return fail(.truncated, "transfer ended early: " + cause, transient: true)
        case CURLE_FILESIZE_EXCEEDED:
            return fail(.tooLarge, "body is larger than the \(policy.maxBytes)-byte limit", transient: false)
        case CURLE_OPERATION_TIMEDOUT:
            return fail(.timeout, cause, transient: true)
        case CURLE_UNSUPPORTED_PROTOCOL:
            // Only a redirect can get here: the request's own scheme was checked before.
            let target = headers.location.map { " to " + FetchError.displayed($0) } ?? ""
            return fail(.redirectRefused, "redirect\(target) refused, only http and https are followed: " + cause,
                        transient: false)
        case CURLE_TOO_MANY_REDIRECTS:
            return fail(.redirectRefused, "too many redirects: " + cause, transient: false)
        case CURLE_COULDNT_CONNECT:
            // Refused or unreachable (a connect that hangs is CURLE_OPERATION_TIMEDOUT, above).
            var failure = fail(.transport, cause, transient: true)
            failure.quickRetryOnly = true
            return failure
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY,
             CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_SSL_CONNECT_ERROR,
             CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return fail(.transport, cause, transient: true)
        default:
            return fail(.transport, cause, transient: false)
        }
    }
}

extension RemoteSource {
    fileprivate func fail(
        _ kind: FetchError.Kind, _ cause: String, transient: Bool, retryAfter: Double? = nil
    ) -> AttemptFailure {
        AttemptFailure(error: FetchError(kind: kind, url: url, cause: cause), isTransient: transient,
                       retryAfter: retryAfter)
    }
}

/// The `Retry-After` header: delta-seconds, or an HTTP-date (IMF-fixdate, `HTTPDate`).
public enum RetryAfter {
    /// Seconds to wait from `now`, or nil when the value is neither form.
    public static func seconds(from value: String, now: Date = Date()) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed) { return Double(max(seconds, 0)) }
        guard let instant = HTTPDate.parse(trimmed) else { return nil }
        return max(Double(instant) - now.timeIntervalSince1970, 0)
    }
}
