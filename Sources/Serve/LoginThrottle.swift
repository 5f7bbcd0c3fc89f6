import Hummingbird
import NIOCore
import Synchronization

/// Wrong tokens per client: after `attempts` failures (a sign-in or a bearer header) within
/// `window`, that client's attempts are answered 429 with `Retry-After` until the oldest failure
/// leaves the window. Without it a client tried 3,277 tokens in 3 s on one connection.
///
/// A client is its IP address. Behind a reverse proxy every client is the proxy's address, so
/// the limit is then shared by all: for a household, ten wrong tokens a minute is still plenty.
/// `X-Forwarded-For` is not trusted (anyone can send it).
///
///     if let wait = throttle.retryAfter(client) { return Pages.tooManyAttempts(wait) }
///     if !correct { throttle.recordFailure(client) }
final class LoginThrottle: Sendable {
    let attempts: Int
    let window: Duration
    /// At most this many clients are remembered; beyond it the one with the oldest failure goes.
    static let maxClients = 4096

    private let failures = Mutex<[String: [ContinuousClock.Instant]]>([:])

    init(attempts: Int = 10, window: Duration = .seconds(60)) {
        self.attempts = attempts
        self.window = window
    }

    /// Whole seconds until `client` may try again; nil when it may try now.
    func retryAfter(_ client: String, now: ContinuousClock.Instant = .now) -> Int? {
        failures.withLock { all in
            guard let recent = all[client]?.filter({ now - $0 < window }), recent.count >= attempts, let oldest = recent.first else { return nil }
            let wait = window - (now - oldest)
            return max(1, Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0))
        }
    }

    func recordFailure(_ client: String, now: ContinuousClock.Instant = .now) {
        failures.withLock { all in
            var recent = (all[client] ?? []).filter { now - $0 < window }
            recent.append(now)
            // Only the last `attempts` matter.
            all[client] = Array(recent.suffix(attempts))
            if all.count > Self.maxClients {
                let window = window
                all = all.filter { $0.value.contains { now - $0 < window } }
                while all.count > Self.maxClients, let stalest = all.min(by: { ($0.value.last ?? now) < ($1.value.last ?? now) })?.key {
                    all[stalest] = nil
                }
            }
        }
    }
}

/// The request context of `serve`: Hummingbird's, and the client's address (the login limit's key).
struct ServeRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    private let channel: any Channel
    /// The peer's IP address, or "local" for a Unix socket: written out only when asked for (a
    /// sign-in, a bearer token), not on every request.
    var client: String { channel.remoteAddress?.ipAddress ?? "local" }

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}
