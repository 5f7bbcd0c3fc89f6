import Foundation
import Hummingbird
import HTTPTypes
import HummingbirdTesting
import Job
import enum Job.ExitStatus
import NIOCore
import Serve
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The repository root, from this file's path (Tests/ServeTests/Support.swift).
let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
/// What `tvimport serve` execs: the server, built beside tvimport.
var binaryBuilt: Bool { FileManager.default.isExecutableFile(atPath: Repository.tvimport) && FileManager.default.isExecutableFile(atPath: Repository.tvimportServe) }
let curlPath = "/usr/bin/curl"
var curlInstalled: Bool { FileManager.default.isExecutableFile(atPath: curlPath) }

struct Output {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// A fresh temporary directory with a guide imported and exported: two channels, one of them
/// with hostile names and titles.
final class ServeSandbox: Sendable {
    let dir: URL
    init() throws {
        // A server or browser that exits first must not kill the test process with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("servetests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: dir) }

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
    func write(_ name: String, _ text: String) throws { try text.write(toFile: path(name), atomically: true, encoding: .utf8) }

    /// Runs a program (default: tvimport) here and waits for it.
    @discardableResult
    func run(_ args: [String], executable: String = Repository.tvimport, environment: [String: String] = [:]) throws -> Output {
        let p = try start(args, executable: executable, environment: environment)
        p.process.waitForExit()
        return p.output()
    }

    /// A program started here (`RunningProcess`), and its output so far.
    final class Running {
        let process: RunningProcess
        init(process: RunningProcess) { self.process = process }
        func output() -> Output {
            Output(status: process.exitStatus ?? -1, stdout: process.stdout, stderr: process.stderr)
        }
    }

    /// Starts a program here, without the environment that would point it elsewhere.
    func start(_ args: [String], executable: String = Repository.tvimport, environment: [String: String] = [:]) throws -> Running {
        var env: [String: String?] = [:]
        for k in ["TVIMPORT_DB", "TVIMPORT_OUTPUT", "TVIMPORT_CACHE", "TVIMPORT_BASE_URL", "TVIMPORT_SERVE_TOKEN", "TVIMPORT_CONFIG"] { env[k] = .some(nil) }
        for (k, v) in environment { env[k] = v }
        return Running(process: try RunningProcess(executable, args, in: dir, environment: env))
    }
}

/// A `tvimport serve` process on 127.0.0.1 and a free port.
final class ServerProcess {
    let running: ServeSandbox.Running
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    init(_ box: ServeSandbox, arguments: [String], environment: [String: String] = [:]) throws {
        running = try box.start(["serve", "--port", "0"] + arguments, environment: environment)
        let deadline = Date().addingTimeInterval(30)
        while true {
            let err = running.output().stderr
            if let range = err.range(of: "listening on http://127.0.0.1:") {
                port = Int(err[range.upperBound...].prefix { $0.isNumber }) ?? 0
                break
            }
            if !running.process.isRunning || Date() > deadline {
                throw ServerFailed(stderr: err)
            }
            usleep(50_000)
        }
    }

    /// SIGTERM; the exit status.
    func stop() -> Int32 {
        running.process.send(SIGTERM)
        return running.process.waitForExit()
    }
}

struct ServerFailed: Error, CustomStringConvertible {
    let stderr: String
    var description: String { "tvimport serve did not start: \(stderr)" }
}

struct HTTPResult {
    var status: Int
    var headers: [String: String]
    var body: Data
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// One request with curl (a real HTTP client; --path-as-is sends `..` and escapes untouched).
func curl(_ url: String, method: String? = nil, headers: [String: String] = [:], form: [(String, String)]? = nil,
          formFile: (name: String, path: String)? = nil, cookieJar: String? = nil) throws -> HTTPResult {
    let id = UUID().uuidString
    let bodyFile = FileManager.default.temporaryDirectory.appendingPathComponent("curl-body-\(id)").path
    let headerFile = FileManager.default.temporaryDirectory.appendingPathComponent("curl-head-\(id)").path
    defer { try? FileManager.default.removeItem(atPath: bodyFile); try? FileManager.default.removeItem(atPath: headerFile) }
    var args = ["-s", "-S", "--path-as-is", "--max-time", "20", "-o", bodyFile, "-D", headerFile, "-w", "%{http_code}"]
    if let method { args += method == "HEAD" ? ["-I"] : ["-X", method] }
    for (name, value) in headers { args += ["-H", "\(name): \(value)"] }
    for (name, value) in form ?? [] { args += ["--data-urlencode", "\(name)=\(value)"] }
    if let formFile { args += ["--data-urlencode", "\(formFile.name)@\(formFile.path)"] }
    if let cookieJar { args += ["-b", cookieJar, "-c", cookieJar] }
    args.append(url)
    let code = try Subprocess.run(curlPath, args, timeout: 60).output
    var headerMap: [String: String] = [:]
    let headerText = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
    for line in headerText.split(separator: "\r\n") {
        guard let colon = line.firstIndex(of: ":") else { continue }
        headerMap[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return HTTPResult(status: Int(code) ?? 0, headers: headerMap, body: FileManager.default.contents(atPath: bodyFile) ?? Data())
}

/// The index of the programme on now in `makeGuide` (half-hour slots from `guideStart`).
func onNow() -> Int { (Int(Date().timeIntervalSince1970) - guideStart) / 1800 }

/// Where `makeGuide`'s programmes start: the top of the hour before this process's first use of
/// it, taken once, so a test that makes a guide before an hour turns and asks what is on after
/// it still agrees with its guide (the guide covers six hours from here).
let guideStart: Int = thisHour() - 3600

/// The top of the current hour, in seconds.
func thisHour() -> Int {
    let now = Int(Date().timeIntervalSince1970)
    return now - now % 3600
}

/// A guide from an hour ago on: `alpha.test` with plain titles, `evil.test` with hostile ones.
func makeGuide(titlePrefix: String = "Show", evilTitle: String = "<script>alert('x')</script> & \"quotes\"") -> String {
    let base = Int64(guideStart)
    let evilDesc = "<desc>" + GuideText.escaped("<img src=x onerror=alert(1)>") + "</desc>"
    var programmes: [GuideText.Programme] = []
    for i in Int64(0)..<12 {
        let start = base + i * 1800
        programmes.append(GuideText.Programme("alpha.test", start: start, stop: start + 1800, title: "\(titlePrefix) \(i)"))
        programmes.append(GuideText.Programme("evil.test", start: start, stop: start + 1800, title: "\(evilTitle) \(i)", extra: evilDesc))
    }
    return GuideText.document(
        channels: [.init("alpha.test", name: "Alpha One"), .init("evil.test", name: "Evil <b>\"Channel\"</b>")],
        programmes: programmes)
}

/// A config with one source, a database and a feed directory in the sandbox (absolute paths:
/// the same files whether a process in the sandbox or this process reads it).
func makeConfig(_ box: ServeSandbox, extra: String = "") -> String {
    "{\"database\": \"\(box.path("tv.sqlite"))\", \"output\": \"\(box.path("feeds"))\", \"sources\": [{\"name\": \"g\", \"url\": \"\(box.path("guide.xml"))\"}]\(extra)}"
}

/// A sandbox after one nightly run of the generated guide (the Job library, in this process).
func preparedSandbox(extra: String = "") throws -> ServeSandbox {
    let box = try ServeSandbox()
    try box.write("guide.xml", makeGuide())
    try box.write("c.json", makeConfig(box, extra: extra))
    let status = try box.nightlyRun()
    #expect(status == .success, "run: \(status)")
    return box
}

extension ServeSandbox {
    /// The nightly job of `config` (quiet), called in this process: its exit status.
    func nightlyRun(config: String = "c.json", force: Bool = false) throws -> ExitStatus {
        var job = NightlyJob(config: try JobConfig.load(path: path(config)))
        job.flags.quiet = true
        job.flags.force = force
        return try job.run().status
    }
}

/// The server of `box`'s config in this process (HummingbirdTesting): `.router` answers through
/// the routes with no socket; `.live` listens on a free loopback port (`client.port`) for what
/// needs a real connection (the feeds' event-loop answers, pipelining, a client's address).
func inProcess(_ box: ServeSandbox, _ setup: TestingSetup = .router, config: String = "c.json",
               _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
    let config = try JobConfig.load(path: box.path(config), requireSources: false)
    try await inProcess(options: try ServeOptions(config: config, environment: [:]), setup, test)
}

/// The server of `options` in this process.
func inProcess(options: ServeOptions, _ setup: TestingSetup = .router,
               _ test: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
    try await ServeServer.application(options: options).test(setup, test)
}

/// Cookies a server set, sent back with the next requests (curl's cookie jar, for `fetch`).
final class CookieJar: @unchecked Sendable {
    private let lock = NSLock()
    private var cookies: [String: String] = [:]

    var header: String? { lock.withLock { cookies.isEmpty ? nil : cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") } }

    func take(_ setCookie: String) {
        guard let pair = setCookie.split(separator: ";").first, let equals = pair.firstIndex(of: "=") else { return }
        let name = pair[..<equals].trimmingCharacters(in: .whitespaces), value = String(pair[pair.index(after: equals)...])
        let expired = setCookie.lowercased().contains("max-age=0")
        lock.withLock { cookies[name] = expired ? nil : value }
    }
}

extension TestClientProtocol {
    /// One request as `curl` sends it (a form is POSTed URL-encoded), its answer as `HTTPResult`:
    /// a test reads the same through the router or a socket.
    func fetch(_ path: String, method: String? = nil, headers: [String: String] = [:], form: [(String, String)]? = nil,
               formFile: (name: String, path: String)? = nil, cookies: CookieJar? = nil) async throws -> HTTPResult {
        var fields = HTTPFields()
        for (name, value) in headers { fields.append(HTTPField(name: try #require(HTTPField.Name(name)), value: value)) }
        if let cookie = cookies?.header { fields[.cookie] = cookie }
        var pairs = form ?? []
        if let formFile { pairs.append((formFile.name, try String(contentsOfFile: formFile.path, encoding: .utf8))) }
        var body: ByteBuffer?
        if form != nil || formFile != nil {
            let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
            let encoded = pairs.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")" }.joined(separator: "&")
            body = ByteBuffer(string: encoded)
            fields[.contentType] = "application/x-www-form-urlencoded"
        }
        let verb = method.map { HTTPRequest.Method($0)! } ?? (body == nil ? .get : .post)
        let response = try await execute(uri: path, method: verb, headers: fields, body: body)
        var map: [String: String] = [:]
        for field in response.headers {
            map[field.name.canonicalName] = field.value
            if field.name == .setCookie { cookies?.take(field.value) }
        }
        return HTTPResult(status: response.status.code, headers: map, body: Data(response.body.readableBytesView))
    }
}
