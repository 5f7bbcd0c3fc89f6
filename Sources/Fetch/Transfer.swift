import CCurl
import Foundation

/// libcurl wants one global initialisation before any handle; a global `let` runs it once, thread-safely.
private let curlGlobalInit: CURLcode = tv_curl_global_init_default()

/// libcurl's global initialisation, for every module that makes easy handles (Fetch, Publish).
public enum LibCurl {
    /// Runs `curl_global_init` once per process; call it before `curl_easy_init`.
    public static func initialise() { _ = curlGlobalInit }
}

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

/// What the C callbacks reach through their context pointer.
final class TransferContext {
    let handle: UnsafeMutableRawPointer
    let sink: BodySink
    let headers = ResponseHeaders()
    private var bodyWanted: Bool?

    init(handle: UnsafeMutableRawPointer, sink: BodySink) {
        self.handle = handle
        self.sink = sink
    }

    func receiveBody(_ chunk: UnsafeRawBufferPointer) -> Bool {
        let wanted: Bool
        if let known = bodyWanted {
            wanted = known
        } else {
            // Only a success body goes to disk: an error page is not worth reading, let alone keeping.
            var status = 0
            _ = tv_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
            wanted = status == 0 || (200..<300).contains(status)
            bodyWanted = wanted
        }
        return wanted ? sink.write(chunk) : sink.refuse()
    }
}

/// What one attempt of a transfer produced, before any judgement.
struct TransferReport {
    var code: CURLcode
    var curlMessage: String
    var status: Int
    var redirects: Int
    /// Declared Content-Length, -1 when unknown.
    var contentLength: Int64
    /// Body bytes received on the wire (before content decoding).
    var wireBytes: Int64
}

/// One libcurl easy transfer of `url` into `sink`.
struct Transfer {
    var url: String
    var policy: FetchPolicy
    var validators: HTTPValidators?
    /// The rest of the fetch's budget, in seconds: also caps this attempt.
    var timeLimit: Double

    func run(into sink: BodySink) -> (TransferReport, ResponseHeaders) {
        LibCurl.initialise()
        guard let handle = curl_easy_init() else {
            return (TransferReport(code: CURLE_FAILED_INIT, curlMessage: "curl_easy_init failed",
                                   status: 0, redirects: 0, contentLength: -1, wireBytes: 0), ResponseHeaders())
        }
        defer { curl_easy_cleanup(handle) }

        let context = TransferContext(handle: handle, sink: sink)
        let contextPointer = Unmanaged.passUnretained(context).toOpaque()
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(to: 0)
        defer { errorBuffer.deallocate() }
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }

        // Fail closed: a libcurl that rejects an option (a protocol restriction above all) must not
        // go on without it.
        var setupFailure = CURLE_OK
        func check(_ code: CURLcode) {
            if setupFailure == CURLE_OK { setupFailure = code }
        }

        check(tv_curl_setopt_string(handle, CURLOPT_URL, url))
        check(tv_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https,file"))
        check(tv_curl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        check(tv_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 1))
        check(tv_curl_setopt_long(handle, CURLOPT_MAXREDIRS, policy.maxRedirects))
        check(tv_curl_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, ""))
        check(tv_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        check(tv_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        check(tv_curl_setopt_string(handle, CURLOPT_USERAGENT, policy.userAgent))
        check(tv_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(policy.connectTimeout)))
        check(tv_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds(timeLimit)))
        check(tv_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, policy.lowSpeedLimit))
        check(tv_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, policy.lowSpeedTime))
        check(tv_curl_setopt_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(policy.maxBytes)))
        check(tv_curl_setopt_long(handle, CURLOPT_FAILONERROR, 0))
        check(tv_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        check(tv_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))

        for line in conditionalHeaders() {
            headerList = curl_slist_append(headerList, line)
        }
        if let headerList {
            check(tv_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList)))
        }

        check(tv_curl_setopt_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let length = size * count
            guard let data, let context else { return 0 }
            let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
            return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
        })
        check(tv_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, contextPointer))
        check(tv_curl_setopt_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let length = size * count
            guard let data, let context else { return length }
            let transfer = Unmanaged<TransferContext>.fromOpaque(context).takeUnretainedValue()
            transfer.headers.receive(line: UnsafeRawBufferPointer(start: data, count: length))
            return length
        })
        check(tv_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, contextPointer))

        if setupFailure != CURLE_OK {
            let message = "libcurl rejected an option: " + String(cString: curl_easy_strerror(setupFailure))
            // Reported as an initialisation failure: never retried, never mistaken for a refused redirect.
            return (TransferReport(code: CURLE_FAILED_INIT, curlMessage: message, status: 0, redirects: 0,
                                   contentLength: -1, wireBytes: 0), context.headers)
        }
        let code = withExtendedLifetime(context) { curl_easy_perform(handle) }

        var status = 0
        var redirects = 0
        var contentLength: curl_off_t = -1
        var wireBytes: curl_off_t = 0
        tv_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        tv_curl_getinfo_long(handle, CURLINFO_REDIRECT_COUNT, &redirects)
        tv_curl_getinfo_offset(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &contentLength)
        tv_curl_getinfo_offset(handle, CURLINFO_SIZE_DOWNLOAD_T, &wireBytes)
        var message = String(cString: errorBuffer)
        if message.isEmpty { message = String(cString: curl_easy_strerror(code)) }
        let report = TransferReport(
            code: code, curlMessage: message, status: status, redirects: redirects,
            contentLength: Int64(contentLength), wireBytes: Int64(wireBytes))
        return (report, context.headers)
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

    private func milliseconds(_ seconds: Double) -> Int {
        max(1, Int((seconds * 1000).rounded(.up)))
    }
}
