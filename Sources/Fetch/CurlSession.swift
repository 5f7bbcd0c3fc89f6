import CCurl
import Foundation

/// libcurl wants one global initialisation before any handle; a global `let` runs it once, thread-safely.
private let curlGlobalInit: CURLcode = tv_curl_global_init_default()

/// libcurl's global initialisation, for every module that makes easy handles (Fetch, Publish).
public enum LibCurl {
    /// Runs `curl_global_init` once per process; call it before `curl_easy_init`.
    public static func initialise() { _ = curlGlobalInit }
}

/// One libcurl easy handle and the only place its options are set: downloads (Fetch) and the
/// object store (Publish) share the protocol limits, TLS checks, user agent, timeouts and
/// callbacks, and add what only they need (content decoding and a size cap; signing and uploads).
/// The handle is reset before each request and kept between them, so its connection is reused.
/// Not thread-safe: one per thread.
///
/// ```swift
/// let session = try #require(CurlSession())
/// var body: [UInt8] = []
/// let request = CurlSession.Request(url: "https://example.org/guide.xml", policy: FetchPolicy(), timeLimit: 60)
/// let outcome = session.perform(request, body: { body += $0; return true }, header: { _ in })
/// ```
public final class CurlSession {
    /// What one request asks of libcurl.
    public struct Request {
        public var url: String
        /// User agent, connection timeout and low-speed limits.
        public var policy: FetchPolicy
        /// Seconds the whole request may take.
        public var timeLimit: Double
        /// The protocols the URL may use (`CURLOPT_PROTOCOLS_STR`).
        public var protocols = "http,https"
        /// Redirects followed: at most `max` of them, to the given protocols; nil follows none.
        public var redirects: (max: Int, protocols: String)?
        /// Accept and decode every content encoding libcurl knows (gzip, br, zstd).
        public var decodesContent = false
        /// A body declared larger than this is refused before it is read.
        public var maxBytes: Int64?
        /// Extra header lines; a line holding CR, LF or NUL is left out (it could inject a header).
        public var headers: [String] = []
        /// A method other than GET (DELETE), or PUT with `upload`.
        public var customMethod: String?
        /// The body of a PUT: an open file and its size.
        public var upload: (file: UnsafeMutablePointer<FILE>, size: Int64)?
        /// AWS Signature V4 by libcurl: the provider string ("aws:amz:REGION:s3") and the key pair.
        public var signature: (provider: String, accessKey: String, secretKey: String)?

        public init(url: String, policy: FetchPolicy, timeLimit: Double) {
            self.url = url
            self.policy = policy
            self.timeLimit = timeLimit
        }
    }

    /// What one request produced, before any judgement.
    public struct Outcome {
        public var code: CURLcode
        /// libcurl's error text (its error buffer, else the code's description).
        public var message: String
        /// The last response's status; 0 when there was none.
        public var status: Int
        public var redirects: Int
        /// Declared Content-Length, -1 when unknown.
        public var contentLength: Int64
        /// Body bytes received on the wire (before content decoding).
        public var wireBytes: Int64
    }

    private let handle: UnsafeMutableRawPointer

    /// Nil when libcurl cannot make a handle.
    public init?() {
        LibCurl.initialise()
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
    }

    deinit { curl_easy_cleanup(handle) }

    /// The status of the response being received (0 before its status line): `body` may ask it.
    public var status: Int {
        var status = 0
        _ = tv_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return status
    }

    /// Sends `request`. `body` receives the response body as it comes (false stops the transfer);
    /// `header` each raw header line, CRLF included, of every response of a redirect chain.
    public func perform(_ request: Request, body: (UnsafeRawBufferPointer) -> Bool,
                        header: (UnsafeRawBufferPointer) -> Void) -> Outcome {
        withoutActuallyEscaping(body) { body in
            withoutActuallyEscaping(header) { header in
                perform(request, Callbacks(body: body, header: header, upload: request.upload?.file))
            }
        }
    }

    private func perform(_ request: Request, _ callbacks: Callbacks) -> Outcome {
        curl_easy_reset(handle)
        let context = Unmanaged.passUnretained(callbacks).toOpaque()
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(to: 0)
        defer { errorBuffer.deallocate() }
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }

        // Fail closed: a libcurl that rejects an option (a protocol restriction above all) must not
        // go on without it.
        var setupFailure = CURLE_OK
        func check(_ code: CURLcode) { if setupFailure == CURLE_OK { setupFailure = code } }
        let policy = request.policy

        check(tv_curl_setopt_string(handle, CURLOPT_URL, request.url))
        check(tv_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, request.protocols))
        if let redirects = request.redirects {
            check(tv_curl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, redirects.protocols))
            check(tv_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 1))
            check(tv_curl_setopt_long(handle, CURLOPT_MAXREDIRS, redirects.max))
        } else {
            check(tv_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        }
        if request.decodesContent { check(tv_curl_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, "")) }
        check(tv_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        check(tv_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        check(tv_curl_setopt_string(handle, CURLOPT_USERAGENT, policy.userAgent))
        check(tv_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(policy.connectTimeout)))
        check(tv_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Self.milliseconds(request.timeLimit)))
        check(tv_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, policy.lowSpeedLimit))
        check(tv_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, policy.lowSpeedTime))
        if let maxBytes = request.maxBytes { check(tv_curl_setopt_offset(handle, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(maxBytes))) }
        check(tv_curl_setopt_long(handle, CURLOPT_FAILONERROR, 0))
        check(tv_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        check(tv_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))
        if let signature = request.signature {
            check(tv_curl_setopt_string(handle, CURLOPT_AWS_SIGV4, signature.provider))
            check(tv_curl_setopt_string(handle, CURLOPT_USERNAME, signature.accessKey))
            check(tv_curl_setopt_string(handle, CURLOPT_PASSWORD, signature.secretKey))
        }
        if let method = request.customMethod { check(tv_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method)) }
        if let upload = request.upload {
            check(tv_curl_setopt_long(handle, CURLOPT_UPLOAD, 1))
            check(tv_curl_setopt_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(upload.size)))
            check(tv_curl_setopt_callback(handle, CURLOPT_READFUNCTION) { data, size, count, context in
                guard let data, let context,
                      let file = Unmanaged<Callbacks>.fromOpaque(context).takeUnretainedValue().upload else { return Int(CURL_READFUNC_ABORT) }
                return fread(data, 1, size * count, file)
            })
            check(tv_curl_setopt_pointer(handle, CURLOPT_READDATA, context))
        }
        for line in request.headers where !line.utf8.contains(where: { $0 == 0x0d || $0 == 0x0a || $0 == 0 }) {
            headerList = curl_slist_append(headerList, line)
        }
        if let headerList { check(tv_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList))) }
        check(tv_curl_setopt_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let length = size * count
            guard let data, let context else { return 0 }
            let callbacks = Unmanaged<Callbacks>.fromOpaque(context).takeUnretainedValue()
            return callbacks.body(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
        })
        check(tv_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context))
        check(tv_curl_setopt_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let length = size * count
            guard let data, let context else { return length }
            Unmanaged<Callbacks>.fromOpaque(context).takeUnretainedValue().header(UnsafeRawBufferPointer(start: data, count: length))
            return length
        })
        check(tv_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context))

        if setupFailure != CURLE_OK {
            // Reported as an initialisation failure: never retried, never mistaken for a refused redirect.
            return Outcome(code: CURLE_FAILED_INIT, message: "libcurl rejected an option: " + String(cString: curl_easy_strerror(setupFailure)),
                           status: 0, redirects: 0, contentLength: -1, wireBytes: 0)
        }
        let code = withExtendedLifetime(callbacks) { curl_easy_perform(handle) }

        var status = 0, redirects = 0
        var contentLength: curl_off_t = -1, wireBytes: curl_off_t = 0
        tv_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        tv_curl_getinfo_long(handle, CURLINFO_REDIRECT_COUNT, &redirects)
        tv_curl_getinfo_offset(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &contentLength)
        tv_curl_getinfo_offset(handle, CURLINFO_SIZE_DOWNLOAD_T, &wireBytes)
        var message = String(cString: errorBuffer)
        if message.isEmpty { message = String(cString: curl_easy_strerror(code)) }
        return Outcome(code: code, message: message, status: status, redirects: redirects,
                       contentLength: Int64(contentLength), wireBytes: Int64(wireBytes))
    }

    private static func milliseconds(_ seconds: Double) -> Int { max(1, Int((seconds * 1000).rounded(.up))) }
}

/// What the C callbacks reach through their context pointer.
private final class Callbacks {
    let body: (UnsafeRawBufferPointer) -> Bool
    let header: (UnsafeRawBufferPointer) -> Void
    let upload: UnsafeMutablePointer<FILE>?

    init(body: @escaping (UnsafeRawBufferPointer) -> Bool, header: @escaping (UnsafeRawBufferPointer) -> Void,
         upload: UnsafeMutablePointer<FILE>?) {
        self.body = body
        self.header = header
        self.upload = upload
    }
}
