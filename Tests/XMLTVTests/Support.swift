import Foundation
import TestSupport
import XMLTV

/// Everything a reader produced, for assertions.
struct ReadResult {
    var channels: [XMLTVChannel] = []
    var programmes: [XMLTVProgramme] = []
    var warnings: [XMLTVWarning] = []
}

enum Fixture {
    static let directory: URL = try! Scratch.directory("xmltv-tests")

    /// Writes `text` (or `bytes`) to a fresh temporary file and returns its path.
    static func write(_ text: String, name: String = "guide.xml") -> String {
        write(Data(text.utf8), name: name)
    }

    static func write(_ bytes: Data, name: String) -> String {
        let url = directory.appendingPathComponent(UUID().uuidString + "-" + name)
        try! bytes.write(to: url)
        return url.path
    }

    /// A minimal document around some programme/channel elements.
    static func tv(_ body: String) -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<tv>\n\(body)\n</tv>\n"
    }

    static func gzip(_ data: Data) -> Data {
        let input = write(data, name: "raw")
        return try! Subprocess.run("/bin/gzip", ["-c", "-n", input]).stdout
    }
}

func readAll(_ path: String, options: XMLTVReaderOptions = .init()) throws -> ReadResult {
    let reader = try XMLTVReader(path: path, options: options)
    var result = ReadResult()
    while let item = try reader.next() {
        switch item {
        case .channel(let c): result.channels.append(c)
        case .programme(let p): result.programmes.append(p)
        }
    }
    result.warnings = reader.warnings
    return result
}

func readError(_ path: String) -> XMLTVError? {
    do {
        _ = try readAll(path)
        return nil
    } catch let error as XMLTVError {
        return error
    } catch {
        return nil
    }
}

/// UTC seconds of a plain `YYYYMMDDhhmmss`, for expectations.
func utc(_ s: String) -> Int64 { XMLTVTime.parse(s)!.utc }
