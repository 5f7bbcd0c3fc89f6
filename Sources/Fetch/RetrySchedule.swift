import Foundation

/// When to try a transfer again: exponential backoff (or the server's `Retry-After`) within a
/// policy's retry count and time budget. Downloads (RemoteSource) and uploads to object storage
/// (the Publish target) both pace their attempts with it.
public struct RetrySchedule: Sendable {
    public enum Decision: Sendable, Equatable {
        /// Wait this many seconds, then try again.
        case retry(after: Double)
        /// Give up; the text says why no further attempt is made (empty for a permanent failure).
        case giveUp(reason: String)
    }

    public let policy: FetchPolicy
    private let clock = ContinuousClock()
    private let start: ContinuousClock.Instant
    /// Attempts made so far.
    public private(set) var attempts = 0

    public init(policy: FetchPolicy) {
        self.policy = policy
        start = clock.now
    }

    /// Seconds of the budget left: the next attempt's own time limit.
    public var remaining: Double {
        let duration = start.duration(to: clock.now)
        let elapsed = Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        return max(policy.totalBudget - elapsed, 0.001)
    }

    /// The wait before the one retry of a refused connection: long enough for a server that is
    /// restarting to listen again, short enough that a port nobody serves fails at once.
    public static let quickRetryWait = 0.5

    /// Counts one attempt that failed and says whether another one is worth making. `quickRetryOnly`
    /// (a refused connection: nothing listens there) allows one quick retry and no back-off series,
    /// which would only wait longer for the same answer.
    public mutating func failed(transient: Bool, retryAfter: Double? = nil, quickRetryOnly: Bool = false) -> Decision {
        attempts += 1
        guard transient, attempts <= policy.retries else { return .giveUp(reason: "") }
        if quickRetryOnly {
            guard attempts == 1 else { return .giveUp(reason: "; a refused connection is tried twice only") }
            return Self.quickRetryWait + 1 < remaining ? .retry(after: Self.quickRetryWait) : .giveUp(reason: "")
        }
        let wait = retryAfter ?? policy.initialBackoff * pow(2, Double(attempts - 1))
        // Another attempt needs some time of its own after the wait, or it is bound to time out.
        guard wait + 1 < remaining else {
            return .giveUp(reason: retryAfter != nil
                ? "; the server asked to wait \(Int(wait)) s, beyond the time budget"
                : "; no time left in the \(Int(policy.totalBudget)) s budget for another attempt")
        }
        return .retry(after: wait)
    }

    /// " (after N attempts)" once there was more than one, else "".
    public var attemptsText: String { attempts <= 1 ? "" : " (after \(attempts) attempts)" }
}
