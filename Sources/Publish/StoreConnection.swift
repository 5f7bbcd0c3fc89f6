import CCurl
import Fetch
import Foundation

/// What one request to the store produced.
struct StoreResponse {
    var curlCode: CURLcode
    var curlMessage: String
    var status: Int
    var headers: ResponseHeaders
    /// The response body (a listing or an error document), bounded by `StoreConnection.maxBody`.
    var body: [UInt8]

    var succeeded: Bool { curlCode == CURLE_OK && (200..<300).contains(status) }
}

/// One libcurl easy handle talking to the store, reused between requests so that its connection
/// is kept. Requests are signed by libcurl itself (`CURLOPT_AWS_SIGV4`): no signing code here.
/// Not thread-safe: each worker has its own.
final class StoreConnection {
    /// Hex SHA-256 of no bytes: the payload hash of GET and DELETE.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    /// Listings and error documents are small; anything larger is cut (and is not a listing).
    static let maxBody = 16 << 20

    private let handle: UnsafeMutableRawPointer
    private let target: ObjectStoreTarget
    private let credentials: ObjectStoreCredentials
    private let policy: FetchPolicy
    /// Requests sent, retries included.
    private(set) var requests = 0

    init(target: ObjectStoreTarget, credentials: ObjectStoreCredentials, policy: FetchPolicy) throws(PublishError) {
        LibCurl.initialise()
        guard let handle = curl_easy_init() else { throw PublishError(.store, "libcurl could not create a handle") }
        self.handle = handle
        self.target = target
        self.credentials = credentials
        self.policy = policy
    }

    deinit { curl_easy_cleanup(handle) }

    enum Method: String { case get = "GET", put = "PUT", delete = "DELETE" }

    /// The body of a PUT: a local file and the headers that describe it.
    struct Upload {
        var path: String
        var digests: FileDigests
        var contentType: String
        var cacheControl: String
    }

    /// Sends one request, waiting at most `timeLimit` seconds.
    func perform(_ method: Method, url: String, upload: Upload? = nil, timeLimit: Double) -> StoreResponse {
        requests += 1
        curl_easy_reset(handle)
        let context = ResponseContext()
        let contextPointer = Unmanaged.passUnretained(context).toOpaque()
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(to: 0)
        defer { errorBuffer.deallocate() }
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        var file: UnsafeMutablePointer<FILE>?
        defer { if let file { fclose(file) } }

        var setupFailure = CURLE_OK
        func check(_ code: CURLcode) { if setupFailure == CURLE_OK { setupFailure = code } }

        check(tv_curl_setopt_string(handle, CURLOPT_URL, url))
        check(tv_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
        check(tv_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        check(tv_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, 1))
        check(tv_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2))
        check(tv_curl_setopt_string(handle, CURLOPT_USERAGENT, policy.userAgent))
        check(tv_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(policy.connectTimeout)))
        check(tv_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, milliseconds(timeLimit)))
        check(tv_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, policy.lowSpeedLimit))
        check(tv_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, policy.lowSpeedTime))
        check(tv_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1))
        check(tv_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer))
        // SigV4 by libcurl: provider "aws", service "s3", the target's region.
        check(tv_curl_setopt_string(handle, CURLOPT_AWS_SIGV4, "aws:amz:\(target.region):s3"))
        check(tv_curl_setopt_string(handle, CURLOPT_USERNAME, credentials.accessKeyID))
        check(tv_curl_setopt_string(handle, CURLOPT_PASSWORD, credentials.secretAccessKey))

        // libcurl 7.88 signs the x-amz-content-sha256 given here as the payload hash, and S3
        // refuses a body that does not match it; Content-MD5 is checked by every S3-compatible store.
        // (No "Expect:" to save the 100-continue round trip: libcurl 7.88 would sign the empty header.)
        var lines = ["x-amz-content-sha256: " + (upload?.digests.sha256Hex ?? Self.emptyPayloadHash)]
        if let token = credentials.sessionToken { lines.append("x-amz-security-token: " + token) }
        switch method {
        case .get:
            break
        case .delete:
            check(tv_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, "DELETE"))
        case .put:
            guard let upload else { break }
            lines += ["Content-MD5: " + upload.digests.md5Base64, "Content-Type: " + upload.contentType,
                      "Cache-Control: " + upload.cacheControl]
            do throws(PublishError) {
                file = try LocalObject.openRegularFile(upload.path)
            } catch {
                return StoreResponse(curlCode: CURLE_READ_ERROR, curlMessage: error.message, status: 0, headers: context.headers, body: [])
            }
            guard let file else { return StoreResponse(curlCode: CURLE_READ_ERROR, curlMessage: upload.path, status: 0, headers: context.headers, body: []) }
            context.upload = file
            check(tv_curl_setopt_long(handle, CURLOPT_UPLOAD, 1))
            check(tv_curl_setopt_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(upload.digests.bytes)))
            check(tv_curl_setopt_callback(handle, CURLOPT_READFUNCTION) { data, size, count, context in
                guard let data, let context else { return Int(CURL_READFUNC_ABORT) }
                let response = Unmanaged<ResponseContext>.fromOpaque(context).takeUnretainedValue()
                return fread(data, 1, size * count, response.upload)
            })
            check(tv_curl_setopt_pointer(handle, CURLOPT_READDATA, contextPointer))
        }
        for line in lines where !line.utf8.contains(where: { $0 == 0x0d || $0 == 0x0a }) {
            headerList = curl_slist_append(headerList, line)
        }
        check(tv_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headerList)))
        check(tv_curl_setopt_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            let length = size * count
            guard let data, let context else { return 0 }
            let response = Unmanaged<ResponseContext>.fromOpaque(context).takeUnretainedValue()
            let room = max(StoreConnection.maxBody - response.body.count, 0)
            response.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: min(length, room)))
            return length
        })
        check(tv_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, contextPointer))
        check(tv_curl_setopt_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            let length = size * count
            guard let data, let context else { return length }
            let response = Unmanaged<ResponseContext>.fromOpaque(context).takeUnretainedValue()
            response.headers.receive(line: UnsafeRawBufferPointer(start: data, count: length))
            return length
        })
        check(tv_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, contextPointer))

        if setupFailure != CURLE_OK {
            return StoreResponse(curlCode: CURLE_FAILED_INIT,
                                 curlMessage: "libcurl rejected an option: " + String(cString: curl_easy_strerror(setupFailure)),
                                 status: 0, headers: context.headers, body: [])
        }
        let code = withExtendedLifetime(context) { curl_easy_perform(handle) }
        var status = 0
        tv_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var message = String(cString: errorBuffer)
        if message.isEmpty { message = String(cString: curl_easy_strerror(code)) }
        return StoreResponse(curlCode: code, curlMessage: message, status: status, headers: context.headers, body: context.body)
    }

    private func milliseconds(_ seconds: Double) -> Int { max(1, Int((seconds * 1000).rounded(.up))) }
}

/// What the C callbacks reach through their context pointer.
private final class ResponseContext {
    let headers = ResponseHeaders()
    var body: [UInt8] = []
    var upload: UnsafeMutablePointer<FILE>?
}
