import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One page of a ListObjectsV2 answer.
struct ListBucketPage {
    var objects: [(key: String, etag: String)] = []
    var isTruncated = false
    var nextContinuationToken: String?

    /// Nil when `xml` is not a ListBucketResult.
    init?(xml: [UInt8]) {
        let document = StoreDocument(xml)
        guard document.root == "ListBucketResult" else { return nil }
        objects = document.records.map { record in
            // ETags are quoted in the listing ("…"); the state compares bare hex.
            (record["Key"] ?? "", (record["ETag"] ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
        }.filter { !$0.key.isEmpty }
        isTruncated = document.fields["IsTruncated"] == "true"
        nextContinuationToken = document.fields["NextContinuationToken"]
    }
}

/// The `<Error><Code>…</Code><Message>…</Message></Error>` body of a refusal.
struct StoreErrorDocument {
    var code: String
    var message: String

    init?(xml: [UInt8]) {
        let document = StoreDocument(xml)
        guard document.root == "Error", let code = document.fields["Code"] else { return nil }
        self.code = code
        message = document.fields["Message"] ?? ""
    }
}

/// The flat shape both documents have: the root's child elements as fields, and each
/// `<Contents>` as a record of its child elements.
private final class StoreDocument: NSObject, XMLParserDelegate {
    private(set) var root: String?
    private(set) var fields: [String: String] = [:]
    private(set) var records: [[String: String]] = []
    private var path: [String] = []
    private var text = ""
    private var record: [String: String]?

    init(_ xml: [UInt8]) {
        super.init()
        let parser = XMLParser(data: Data(xml))
        parser.delegate = self
        if !parser.parse() { root = nil }
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        if path.isEmpty { root = name }
        path.append(name)
        text = ""
        if path.count == 2 && name == "Contents" { record = [:] }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if path.count == 2 {
            if name == "Contents", let record { records.append(record) } else { fields[name] = text }
            if name == "Contents" { record = nil }
        } else if path.count == 3, record != nil {
            record?[name] = text
        }
        path.removeLast()
        text = ""
    }
}
