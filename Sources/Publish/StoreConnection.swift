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
/// is kept (`CurlSession`). Requests are signed by libcurl itself (AWS SigV4): no signing code here.
/// Not thread-safe: each worker has its own.
final class StoreConnection {
    /// Hex SHA-256 of no bytes: the payload hash of GET and DELETE.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    /// Listings and error documents are small; anything larger is cut (and is not a listing).
    static let maxBody = 16 << 20

    private let session: CurlSession
    private let target: ObjectStoreTarget
    private let credentials: ObjectStoreCredentials
    private let policy: FetchPolicy
    /// Requests sent, retries included.
    private(set) var requests = 0

    init(target: ObjectStoreTarget, credentials: ObjectStoreCredentials, policy: FetchPolicy) throws(PublishError) {
        guard let session = CurlSession() else { throw PublishError(.store, "libcurl could not create a handle") }
        self.session = session
        self.target = target
        self.credentials = credentials
        self.policy = policy
    }

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
        let headers = ResponseHeaders()
        var request = CurlSession.Request(url: url, policy: policy, timeLimit: timeLimit)
        // SigV4 by libcurl: provider "aws", service "s3", the target's region.
        request.signature = (provider: "aws:amz:\(target.region):s3", accessKey: credentials.accessKeyID,
                             secretKey: credentials.secretAccessKey)
        // libcurl 7.88 signs the x-amz-content-sha256 given here as the payload hash, and S3
        // refuses a body that does not match it; Content-MD5 is checked by every S3-compatible store.
        // (No "Expect:" to save the 100-continue round trip: libcurl 7.88 would sign the empty header.)
        var lines = ["x-amz-content-sha256: " + (upload?.digests.sha256Hex ?? Self.emptyPayloadHash)]
        if let token = credentials.sessionToken { lines.append("x-amz-security-token: " + token) }
        var file: UnsafeMutablePointer<FILE>?
        defer { if let file { fclose(file) } }
        switch method {
        case .get:
            break
        case .delete:
            request.customMethod = "DELETE"
        case .put:
            guard let upload else { break }
            lines += ["Content-MD5: " + upload.digests.md5Base64, "Content-Type: " + upload.contentType,
                      "Cache-Control: " + upload.cacheControl]
            do throws(PublishError) {
                file = try LocalObject.openRegularFile(upload.path)
            } catch {
                return StoreResponse(curlCode: CURLE_READ_ERROR, curlMessage: error.message, status: 0, headers: headers, body: [])
            }
            guard let file else { return StoreResponse(curlCode: CURLE_READ_ERROR, curlMessage: upload.path, status: 0, headers: headers, body: []) }
            request.upload = (file: file, size: upload.digests.bytes)
        }
        request.headers = lines
        var body: [UInt8] = []
        let outcome = session.perform(request, body: { chunk in
            let room = max(Self.maxBody - body.count, 0)
            body.append(contentsOf: chunk.prefix(room))
            return true
        }, header: headers.receive(line:))
        return StoreResponse(curlCode: outcome.code, curlMessage: outcome.message, status: outcome.status, headers: headers, body: body)
    }
}
