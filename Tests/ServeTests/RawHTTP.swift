import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A raw TCP exchange with the server: bytes no HTTP client would send, and what came back.
struct RawExchange {
    var response: [UInt8]
    /// The server closed the connection (EOF) before `timeout` ran out.
    var closed: Bool
    var text: String { String(decoding: response, as: UTF8.self) }
    /// The status line, e.g. `HTTP/1.1 400 Bad Request`.
    /// (By scalars: in Swift "\r\n" is one Character, equal to neither "\r" nor "\n".)
    var statusLine: String { String(String.UnicodeScalarView(text.unicodeScalars.prefix { $0 != "\r" && $0 != "\n" })) }
    /// The header block of the first response, lowercased names.
    var headers: [String: String] {
        var map: [String: String] = [:]
        let head = text.components(separatedBy: "\r\n\r\n").first ?? ""
        for line in head.components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            map[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return map
    }
}

struct RawSocketError: Error, CustomStringConvertible {
    let description: String
}

/// Connects to 127.0.0.1:`port`, sends `request` (in `pieces` writes), then reads until the
/// server closes or `timeout` seconds pass without a byte.
func rawExchange(port: Int, _ request: [UInt8], timeout: Double = 5, from source: String? = nil) throws -> RawExchange {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw RawSocketError(description: "socket: \(errno)") }
    defer { close(fd) }
    var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    func address(_ host: String, _ port: Int) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, host, &a.sin_addr)
        return a
    }
    if let source {
        var local = address(source, 0)
        _ = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    }
    var remote = address("127.0.0.1", port)
    let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard connected == 0 else { throw RawSocketError(description: "connect to port \(port): errno \(errno)") }
    var sent = 0
    while sent < request.count {
        let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if n <= 0 { break }   // the server may refuse the rest: what it answered still counts
        sent += n
    }
    return receiveUntilClosed(fd)
}

/// Reads `fd` until the server closes it or its receive timeout passes without a byte.
func receiveUntilClosed(_ fd: Int32) -> RawExchange {
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 { response += buffer[0..<n]; continue }
        // 0: EOF. -1: the timeout (EAGAIN) or a reset (which also ends the connection).
        return RawExchange(response: response, closed: n == 0 || errno == ECONNRESET)
    }
}

func rawExchange(port: Int, _ request: String, timeout: Double = 5) throws -> RawExchange {
    try rawExchange(port: port, Array(request.utf8), timeout: timeout)
}

/// Runs a program that should exit soon; fails (status -1) rather than hanging when it does not.
func runBriefly(_ box: ServeSandbox, _ args: [String], environment: [String: String] = [:], seconds: Double = 30) throws -> Output {
    let running = try box.start(args, environment: environment)
    let deadline = Date().addingTimeInterval(seconds)
    while running.process.isRunning && Date() < deadline { usleep(50_000) }
    return running.output()   // -1 while still running; the deinit stops it
}
