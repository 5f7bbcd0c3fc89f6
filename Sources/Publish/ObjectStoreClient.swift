import CCurl
import Fetch
import Foundation

/// PUT, DELETE and list on one bucket, each retried with backoff within the fetch policy's budget
/// (per object, as each download has its own). A failure throws a message naming the bucket, the
/// request and the store's own reason; never the secret.
final class ObjectStoreClient {
    let target: ObjectStoreTarget
    private let connection: StoreConnection
    private let policy: FetchPolicy

    init(target: ObjectStoreTarget, credentials: ObjectStoreCredentials, policy: FetchPolicy) throws(PublishError) {
        self.target = target
        self.policy = policy
        connection = try StoreConnection(target: target, credentials: credentials, policy: policy)
    }

    /// Requests sent so far, retries included.
    var requests: Int { connection.requests }

    /// Uploads `upload` as `key`; returns the ETag the store answered.
    @discardableResult
    func put(key: String, _ upload: StoreConnection.Upload) throws(PublishError) -> String? {
        try send(.put, url: target.objectURL(key: key), what: "PUT \(key)", upload: upload).headers.etag
    }

    /// Deletes `key` (deleting a missing key is a success in S3).
    func delete(key: String) throws(PublishError) {
        try send(.delete, url: target.objectURL(key: key), what: "DELETE \(key)")
    }

    /// Every object under the target's prefix: key -> ETag without quotes.
    func list() throws(PublishError) -> [String: String] {
        var objects: [String: String] = [:]
        var token: String?
        repeat {
            let response = try send(.get, url: target.listURL(continuationToken: token), what: "list \(target.prefix.isEmpty ? "the bucket" : target.prefix)")
            guard let page = ListBucketPage(xml: response.body) else {
                throw PublishError(.store, "publish to \(target.displayName): the listing of the bucket is not a ListBucketResult document")
            }
            for (key, etag) in page.objects { objects[key] = etag }
            token = page.isTruncated ? page.nextContinuationToken : nil
        } while token != nil
        return objects
    }

    @discardableResult
    private func send(_ method: StoreConnection.Method, url: String, what: String,
                      upload: StoreConnection.Upload? = nil) throws(PublishError) -> StoreResponse {
        var schedule = RetrySchedule(policy: policy)
        while true {
            let response = connection.perform(method, url: url, upload: upload, timeLimit: schedule.remaining)
            if response.succeeded { return response }
            let (cause, transient) = describe(response)
            let decision = schedule.failed(transient: transient,
                                           retryAfter: response.headers.retryAfter.flatMap { RetryAfter.seconds(from: $0) })
            switch decision {
            case .retry(let wait):
                Thread.sleep(forTimeInterval: wait)
            case .giveUp(let reason):
                throw PublishError(.store, "publish to \(target.displayName) failed: \(what): \(cause)\(schedule.attemptsText)\(reason)")
            }
        }
    }

    /// The cause in words, and whether another attempt could help.
    private func describe(_ response: StoreResponse) -> (String, Bool) {
        if response.curlCode != CURLE_OK {
            let cause = "\(response.curlMessage) (curl error \(response.curlCode.rawValue))"
            switch response.curlCode {
            case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_GOT_NOTHING,
                 CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_SSL_CONNECT_ERROR, CURLE_OPERATION_TIMEDOUT,
                 CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM:
                return ("store unreachable: " + cause, true)
            default:
                return (cause, false)
            }
        }
        let status = response.status
        var cause = "HTTP \(status)"
        if let error = StoreErrorDocument(xml: response.body) {
            cause += " \(error.code)" + (error.message.isEmpty ? "" : ": \(error.message)")
            if let hint = Self.hints[error.code] { cause += " (\(hint))" }
        } else if !response.headers.reasonPhrase.isEmpty {
            cause += " " + response.headers.reasonPhrase
        }
        return (cause, status == 429 || status >= 500)
    }

    /// What to check for the store's usual refusals.
    private static let hints = [
        "SignatureDoesNotMatch": "check AWS_SECRET_ACCESS_KEY and the region",
        "InvalidAccessKeyId": "check AWS_ACCESS_KEY_ID",
        "AccessDenied": "the credentials need s3:PutObject, s3:DeleteObject and s3:ListBucket on the prefix",
        "NoSuchBucket": "check publish.s3.bucket",
        "ExpiredToken": "renew AWS_SESSION_TOKEN",
        "BadDigest": "the upload arrived damaged; the next run sends it again",
        "XAmzContentSHA256Mismatch": "the upload arrived damaged; the next run sends it again",
    ]
}
