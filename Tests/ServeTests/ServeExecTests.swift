import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `tvimport serve` replaces itself with tvimport-serve (execv): the server runs under the pid
/// that was started, so SIGTERM reaches it and its exit status is the command's.
@Suite(.enabled(if: binaryBuilt, "needs the built tvimport and tvimport-serve binaries (swift build)"),
       .enabled(if: curlInstalled, "needs curl (scripts/install-deps)"))
struct ServeExecTests {
    /// Started as tvimport, running as tvimport-serve: it answers on loopback, and a request in
    /// flight when SIGTERM arrives (its body half sent) is answered before the server exits 0.
    @Test func serveExecsTheServerWhichDrainsOnSIGTERM() throws {
        let box = try preparedSandbox(extra: ", \"serve\": {\"token\": \"exec-token\"}")
        let server = try ServerProcess(box, arguments: ["--config", "c.json"])
        #expect(URL(fileURLWithPath: server.running.process.executable).lastPathComponent == "tvimport")
        let running = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(server.running.process.pid)/exe")
        #expect(running == URL(fileURLWithPath: Repository.tvimportServe).resolvingSymlinksInPath().path)
        #expect(try curl(server.base + "/feeds/index.html").status == 200)

        let body = "token=exec-token"
        let connection = try LoopbackConnection(port: server.port)
        try connection.send("POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                            + "Content-Length: \(body.utf8.count)\r\n\r\n" + body.prefix(5))
        usleep(300_000)   // the server has the request head and waits for the body
        kill(server.running.process.pid, SIGTERM)
        usleep(500_000)
        #expect(server.running.process.isRunning, "the server left with a request in flight")
        try connection.send(String(body.dropFirst(5)))
        let response = connection.receiveAll()
        #expect(response.hasPrefix("HTTP/1.1 303"), "the request in flight: \(response.prefix(200))")
        #expect(response.contains("Set-Cookie:") || response.contains("set-cookie:"))
        // 0, not 128 + a signal: the server exited by itself.
        #expect(server.running.process.waitForExit() == 0, "\(server.running.output().stderr)")
    }

    /// Options are still checked by tvimport itself: a usage error is 64 and starts no server.
    @Test func aBadOptionIsAUsageErrorOfTvimport() throws {
        let box = try ServeSandbox()
        let r = try box.run(["serve", "--port", "70000"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--port must be from 0 to 65535"))
        #expect(!r.stderr.contains("listening"))
        let help = try box.run(["serve", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: tvimport serve") && help.stdout.contains("--feeds <feeds>"))
    }

    /// A tvimport installed without tvimport-serve says where it looked, in one line, and exits 69.
    @Test func withoutTheServerBinaryServeExits69NamingThePath() throws {
        let box = try ServeSandbox()
        let bin = box.path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Repository.tvimport, toPath: bin + "/tvimport")
        let r = try box.run(["serve", "--port", "0"], executable: bin + "/tvimport", environment: ["PATH": "/usr/bin:/bin"])
        #expect(r.status == 69)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(r.stderr)")
        #expect(r.stderr.contains(bin + "/tvimport-serve"), "\(r.stderr)")
        #expect(!r.stderr.contains("listening"))
    }
}

/// A raw TCP connection to 127.0.0.1, to send a request in pieces.
final class LoopbackConnection {
    let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0 { close(descriptor); throw ConnectionFailed(errno: errno) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
    deinit { close(descriptor) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { throw ConnectionFailed(errno: errno) }
            sent += n
        }
    }

    /// Everything until the server closes the connection (or 20 s pass).
    func receiveAll() -> String {
        var received: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(descriptor, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer[..<n]
        }
        return String(decoding: received, as: UTF8.self)
    }

    struct ConnectionFailed: Error { let errno: Int32 }
}
