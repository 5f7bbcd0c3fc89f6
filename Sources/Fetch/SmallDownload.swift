import CCurl
import Foundation

/// One small body over http or https, whole or not at all (`serve`'s channel logos and
/// programme pictures): the same libcurl transfer as a guide's download (TLS verified, redirects
/// only to http and https, a byte cap, timeouts), without the guide's retries, cache and sniffing.
///
///     let logo = SmallDownload.bytes(of: "https://example.com/rte1.png", maxBytes: 512 * 1024)
public enum SmallDownload {
    /// The body of a 2xx answer to a GET of `url`, at most `maxBytes`; nil for any other URL
    /// scheme, status, failure or a larger body. Blocks: call it off the event loop.
    public static func bytes(of url: String, maxBytes: Int64, timeout: Double = 10, directory: String = NSTemporaryDirectory()) -> [UInt8]? {
        let lower = url.prefix(8).lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), maxBytes > 0 else { return nil }
        let policy = FetchPolicy(maxBytes: maxBytes, connectTimeout: min(timeout, 20), lowSpeedTime: max(Int(timeout), 1), retries: 0, totalBudget: timeout)
        guard let sink = try? BodySink(directory: directory, maxBytes: maxBytes) else { return nil }
        defer { sink.discard() }
        let (report, _) = Transfer(url: url, policy: policy, validators: nil, timeLimit: timeout).run(into: sink)
        guard report.code == CURLE_OK, (200..<300).contains(report.status), sink.abort == nil,
              let data = FileManager.default.contents(atPath: sink.path), data.count <= maxBytes else { return nil }
        return [UInt8](data)
    }
}
