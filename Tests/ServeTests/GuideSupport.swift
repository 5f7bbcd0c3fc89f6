import Foundation
import Hummingbird
import HummingbirdTesting
import Job
import Primitives
import enum Job.ExitStatus
import Serve
import TestSupport
import Testing
import XMLTV

/// Tests/ServeTests/image_server.py on a free loopback port: the logo and picture hosts a guide
/// names (no test reaches the network).
final class ImageServer: @unchecked Sendable {
    private let process: RunningProcess
    let port: Int
    var base: String { "http://127.0.0.1:\(port)" }

    init() throws {
        process = try RunningProcess("python3", [repoRoot.appendingPathComponent("Tests/ServeTests/image_server.py").path],
                                     keepsInputOpen: true)
        process.wait(timeout: 30) { $0.stdout.contains("\n") || !$0.isRunning }
        let line = process.stdout
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw Failure(message: "image_server.py said \(line) \(process.stderr)")
        }
        self.port = port
    }

    /// How often each path was asked for.
    func hits() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in try curl(base + "/hits").text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2 { counts[String(parts[0])] = Int(parts[1]) }
        }
        return counts
    }

    /// Closing its input stops it (image_server.py).
    func stop() {
        process.closeInput()
        _ = process.waitForExit(timeout: 30)
    }
}

/// The Irish Freeview grab (../shared/fixtures) moved whole days so that its second day is
/// today (UTC), times of day kept; its channel and programme icons pointing at `images` (logos
/// at /logo/, programme pictures at /picture/).
func freeviewToday(images: String) throws -> String {
    var text = try String(contentsOfFile: Shared.fixture("freeview_ie_2025-10-25T1606.xml"), encoding: .utf8)
    let now = Int(Date().timeIntervalSince1970)
    let firstDay = 1_761_350_400   // 2025-10-25T00:00:00Z
    let shift = ((now - now % 86400) - 86400 - firstDay)
    let time = try NSRegularExpression(pattern: "(start|stop)=\"(\\d{14})")
    var result = ""
    var last = text.startIndex
    for match in time.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
        guard let whole = Range(match.range, in: text), let name = Range(match.range(at: 1), in: text),
              let digits = Range(match.range(at: 2), in: text) else { continue }
        result += text[last..<whole.lowerBound]
        let shifted = Int(try #require(XMLTVTime.parse(text[digits] + " +0000")).utc) + shift
        result += "\(text[name])=\"\(UTCTime.compact(Int64(shifted)))"
        last = whole.upperBound
    }
    result += text[last...]
    text = result
    // Channel icons first (inside <channel>), then programme ones: each its own local image.
    var channelIndex = 0, pictureIndex = 0
    let icon = try NSRegularExpression(pattern: "<icon src=\"https?://[^\"]*\"")
    result = ""
    last = text.startIndex
    for match in icon.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
        guard let whole = Range(match.range, in: text) else { continue }
        result += text[last..<whole.lowerBound]
        let inChannel = text[..<whole.lowerBound].range(of: "<programme", options: .backwards) == nil
        if inChannel {
            channelIndex += 1
            result += "<icon src=\"\(images)/logo/\(channelIndex).png\""
        } else {
            pictureIndex += 1
            result += "<icon src=\"\(images)/picture/\(pictureIndex % 50).png\""
        }
        last = whole.upperBound
    }
    result += text[last...]
    return result
}

/// A sandbox after a nightly run of the moved Freeview guide: config `c.json` (absolute paths,
/// token `guide-token`), database `tv.sqlite`, feeds in `feeds/`.
func freeviewSandbox(images: ImageServer, extra: String = "") throws -> ServeSandbox {
    let box = try ServeSandbox()
    try box.write("guide.xml", try freeviewToday(images: images.base))
    try box.write("c.json", """
        {"database": "\(box.path("tv.sqlite"))", "output": "\(box.path("feeds"))", "sources": [{"name": "freeview", "url": "\(box.path("guide.xml"))"}],
         "serve": {"token": "guide-token"}\(extra)}
        """)
    #expect(try box.nightlyRun() == .success)
    return box
}

/// Reads a response body as text.
func text(_ response: TestResponse) -> String { String(buffer: response.body) }

/// One value of the database through the sqlite3 shell.
func sqlite(_ box: ServeSandbox, _ query: String) throws -> String {
    try Subprocess.run("sqlite3", [box.path("tv.sqlite"), query]).output.trimmingCharacters(in: .whitespacesAndNewlines)
}
