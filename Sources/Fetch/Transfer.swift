import CCurl
import Foundation

/// The response headers Fetch cares about, from the last response of a redirect chain.
public final class ResponseHeaders {
    public private(set) var statusLine = ""
    public private(set) var etag: String?
    public private(set) var lastModified: String?
    public private(set) var retryAfter: String?
    /// The last response's Location: names a redirect that was refused.
    public private(set) var location: String?

    public init() {}

    /// Takes one raw header line as curl hands it over, CRLF included.
    public func receive(line raw: UnsafeRawBufferPointer) {
        // Trim bytes, not Characters: Swift sees "\r\n" as one Character.
        var bytes = raw[...]
        while let last = bytes.last, last == 0x0d || last == 0x0a || last == 0x20 || last == 0x09 {
            bytes = bytes.dropLast()
        }
        let line = String(decoding: bytes, as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            // A new response (after a redirect or a 100 Continue): forget the previous one's headers.
            statusLine = line
            etag = nil
            lastModified = nil
            retryAfter = nil
            location = nil
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        switch name {
        case "etag": etag = value
        case "last-modified": lastModified = value
        case "retry-after": retryAfter = value
        case "location": location = value
        default: break
        }
    }

    /// "Not Found" from "HTTP/1.1 404 Not Found"; empty for HTTP/2, which has no reason phrase.
    public var reasonPhrase: String {
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        return parts.count == 3 ? String(parts[2]) : ""
    }
}

/// One libcurl easy transfer of `url` into `sink`.
struct Transfer {
    var url: String
    var policy: FetchPolicy
    var validators: HTTPValidators?
    /// The rest of the fetch's budget, in seconds: also caps this attempt.
    var timeLimit: Double

    func run(into sink: BodySink) -> (CurlSession.Outcome, ResponseHeaders) {
        let headers = ResponseHeaders()
        guard let session = CurlSession() else {
            return (CurlSession.Outcome(code: CURLE_FAILED_INIT, message: "curl_easy_init failed",
                                        status: 0, redirects: 0, contentLength: -1, wireBytes: 0), headers)
        }
        var request = CurlSession.Request(url: url, policy: policy, timeLimit: timeLimit)
        request.protocols = "http,https,file"
        request.redirects = (max: policy.maxRedirects, protocols: "http,https")
        request.decodesContent = true
        request.maxBytes = policy.maxBytes
        request.headers = conditionalHeaders()
        var bodyWanted: Bool?
        let outcome = session.perform(request, body: { chunk in
            // Only a success body goes to disk: an error page is not worth reading, let alone keeping.
            let wanted = bodyWanted ?? { let status = session.status; return status == 0 || (200..<300).contains(status) }()
            bodyWanted = wanted
            return wanted ? sink.write(chunk) : sink.refuse()
        }, header: headers.receive(line:))
        return (outcome, headers)
    }

    /// If-None-Match / If-Modified-Since, skipping any value that could inject a header.
    private func conditionalHeaders() -> [String] {
        guard let validators else { return [] }
        var lines: [String] = []
        if let etag = validators.etag, isSafeHeaderValue(etag) {
            lines.append("If-None-Match: " + etag)
        }
        if let lastModified = validators.lastModified, isSafeHeaderValue(lastModified) {
            lines.append("If-Modified-Since: " + lastModified)
        }
        return lines
    }

    private func isSafeHeaderValue(_ value: String) -> Bool {
        !value.isEmpty && !value.utf8.contains(where: { $0 == 0x0d || $0 == 0x0a || $0 == 0 })
    }
}
