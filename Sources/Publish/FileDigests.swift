import CLibCrypto
import Foundation

/// The MD5 and SHA-256 of a file, read once. MD5 is what S3-compatible stores verify in
/// `Content-MD5` and report as the ETag of a single-part upload; SHA-256 is the signed payload hash
/// (`x-amz-content-sha256`), which the store verifies too. OpenSSL's libcrypto is already on the
/// machine for libcurl (see Package.swift), so no Swift crypto package is needed.
public struct FileDigests: Sendable, Hashable {
    /// 32 lowercase hex digits.
    public var md5Hex: String
    /// 64 lowercase hex digits.
    public var sha256Hex: String
    public var bytes: Int64

    /// The MD5 as `Content-MD5` wants it: base64 of the 16 bytes.
    public var md5Base64: String { Data(hexBytes(md5Hex)).base64EncodedString() }

    public init(md5Hex: String, sha256Hex: String, bytes: Int64) {
        self.md5Hex = md5Hex
        self.sha256Hex = sha256Hex
        self.bytes = bytes
    }

    /// Reads `path` in 1 MiB blocks; throws a message naming the file.
    public init(file path: String) throws(PublishError) {
        let file = try LocalObject.openRegularFile(path)
        defer { fclose(file) }
        let md5 = DigestContext(EVP_md5())
        let sha256 = DigestContext(EVP_sha256())
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 20, alignment: 1)
        defer { buffer.deallocate() }
        var bytes: Int64 = 0
        while true {
            let count = fread(buffer, 1, 1 << 20, file)
            if count == 0 { break }
            md5.update(buffer, count)
            sha256.update(buffer, count)
            bytes += Int64(count)
        }
        if ferror(file) != 0 { throw PublishError(.localFile, "\(path): read error") }
        self.init(md5Hex: md5.finalHex(), sha256Hex: sha256.finalHex(), bytes: bytes)
    }
}

/// One running EVP digest.
private final class DigestContext {
    private let context: OpaquePointer

    init(_ algorithm: OpaquePointer?) {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, algorithm, nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawPointer, _ count: Int) {
        EVP_DigestUpdate(context, bytes, count)
    }

    func finalHex() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return digest.prefix(Int(length)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}

private func hexBytes(_ hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var high: UInt8?
    for unit in hex.utf8 {
        let value: UInt8 = unit <= 0x39 ? unit - 0x30 : (unit | 0x20) - 0x61 + 10
        if let h = high { bytes.append(h << 4 | value); high = nil } else { high = value }
    }
    return bytes
}
