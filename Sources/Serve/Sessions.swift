import Foundation
import Hummingbird

/// Who may edit: the configured token, shown once through the login form (then an HttpOnly,
/// SameSite=Strict session cookie whose forms carry a CSRF token), or sent as a bearer header on
/// each request (not a cookie, so no cross-site request can carry it, and no CSRF token needed).
final class Sessions: @unchecked Sendable {
    static let cookieName = "tvimport_session"
    static let csrfField = "csrf"

    let token: String?
    private let lock = NSLock()
    /// Session id -> its CSRF token. In memory: a restart signs everyone out, which is fine for
    /// one household.
    private var sessions: [String: String] = [:]

    init(token: String?) {
        self.token = token
    }

    enum Credential {
        case none
        case bearer
        case session(csrf: String)
    }

    func credential(of request: Request) -> Credential {
        guard token != nil else { return .none }
        if let header = request.headers[.authorization], acceptsBearer(header) { return .bearer }
        if let id = request.cookies[Self.cookieName]?.value, let csrf = lock.withLock({ sessions[id] }) {
            return .session(csrf: csrf)
        }
        return .none
    }

    /// Whether an Authorization header carries the token (`Bearer TOKEN`).
    func acceptsBearer(_ header: String) -> Bool {
        guard let token, header.hasPrefix("Bearer ") else { return false }
        return Self.constantTimeEqual(String(header.dropFirst("Bearer ".count)), token)
    }

    /// A new session for a correct token; nil otherwise.
    func signIn(with candidate: String) -> (id: String, csrf: String)? {
        guard let token, !token.isEmpty, Self.constantTimeEqual(candidate, token) else { return nil }
        let id = Self.randomToken(), csrf = Self.randomToken()
        lock.withLock {
            // Bounded: a flood of sign-ins cannot grow memory without end.
            if sessions.count > 1000 { sessions.removeAll() }
            sessions[id] = csrf
        }
        return (id, csrf)
    }

    func signOut(_ request: Request) {
        guard let id = request.cookies[Self.cookieName]?.value else { return }
        lock.withLock { _ = sessions.removeValue(forKey: id) }
    }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(generator.next() as UInt64, radix: 16) }.joined(separator: "-")
    }

    /// Equality whose time does not depend on where the strings differ.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = UInt8(x.count == y.count ? 0 : 1)
        for i in 0..<max(x.count, y.count) {
            difference |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)
        }
        return difference == 0
    }
}
