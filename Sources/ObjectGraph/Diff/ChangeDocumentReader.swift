import Foundation
import Primitives

/// Reads a change document from its JSON bytes with `JSONReader`, giving what `ChangeDocument`'s
/// `Decodable` conformance gives for the same text (Tests/ObjectGraphTests/ChangeDocumentReaderTests.swift
/// compares the two). Foundation's decoder spent more on a first import's change file than
/// undoing the import itself (issue 33); this reads each value once, into the nodes directly.
///
/// Keys may come in any order, as for the decoder: a document's `rows` are read before its
/// `changes`, and a compact node's `entityName` and `change` before its `rows`, going back in the
/// text when they come later. Unknown keys are skipped; an absent or null optional member is empty.
struct ChangeDocumentReader {
    private var forms: [String: CompactRows.Form] = [:]
    /// False: the members of inserts are counted, not read (`ObjectDiff.unreadMembers`).
    private var readsInsertedMembers = true
    /// The document's bytes, for `skipCounted`.
    private var text: UnsafeRawBufferPointer?

    /// The document in `bytes`; a `JSONReadError` says where the text is wrong.
    static func document(_ bytes: UnsafeRawBufferPointer) throws -> ChangeDocument {
        var reader = ChangeDocumentReader()
        return try JSONReader.read(bytes) { try reader.document(&$0) }
    }

    /// The document, the members of its inserts counted and not read unless `readingInsertedMembers`;
    /// nil when they cannot be counted so (a member list that holds more than inserts, keys in
    /// another order than a change file's).
    static func document(_ bytes: UnsafeRawBufferPointer, readingInsertedMembers: Bool) throws -> ChangeDocument? {
        var reader = ChangeDocumentReader()
        reader.readsInsertedMembers = readingInsertedMembers
        reader.text = bytes
        do {
            return try JSONReader.read(bytes) { try reader.document(&$0) }
        } catch is NotCountable {
            return nil
        }
    }

    private struct NotCountable: Error {}

    private mutating func document(_ json: inout JSONReader) throws -> ChangeDocument {
        var model: String?
        var excluded: [String] = []
        var changes: [ObjectDiff]?
        var deferredChanges: Int?
        let start = json.offset
        try json.readObject { json, key in
            switch key {
            case "model": model = try Self.string(&json, "model")
            case "excluded": excluded = try Self.optionalArray(&json) { try Self.string(&$0, "an exclusion") }
            case "rows": forms = try Self.forms(&json)
            case "changes":
                let offset = json.offset
                do {
                    changes = try changeList(&json)
                } catch where forms.isEmpty {
                    // Compact rows that the document's rows, still to come, describe: read after them.
                    json.seek(to: offset)
                    try json.skipValue()
                    deferredChanges = offset
                }
            default: try json.skipValue()
            }
        }
        guard let model else { throw json.error("the document has no \"model\"", at: start) }
        if let deferredChanges {
            let end = json.offset
            json.seek(to: deferredChanges)
            changes = try changeList(&json)
            json.seek(to: end)
        }
        guard let changes else { throw json.error("the document has no \"changes\"", at: start) }
        var document = ChangeDocument(model: model, changes: [])
        document.excluded = excluded   // as written: the decoder does not sort them either
        document.changes = changes
        if !forms.isEmpty {
            for i in document.changes.indices { try CompactRows.fillIdentities(&document.changes[i], forms: forms, owner: nil) }
        }
        return document
    }

    private static func forms(_ json: inout JSONReader) throws -> [String: CompactRows.Form] {
        var forms: [String: CompactRows.Form] = [:]
        if try json.readNull() { return forms }
        try json.readObject { json, entity in
            var columns: [String]?, id: [String]?
            let start = json.offset
            try json.readObject { json, key in
                switch key {
                case "columns": columns = try strings(&json, "a column")
                case "id": id = try strings(&json, "an identifier key")
                default: try json.skipValue()
                }
            }
            guard let columns, let id else { throw json.error("the rows of \(entity) need \"columns\" and \"id\"", at: start) }
            forms[entity] = CompactRows.Form(columns: columns, id: id)
        }
        return forms
    }

    // MARK: Nodes

    private func changeList(_ json: inout JSONReader) throws -> [ObjectDiff] {
        guard try json.peekKind() == .array else { throw json.error("expected \"changes\" to be an array") }
        return try nodeList(&json)
    }

    /// A `changes` or `members` array: full nodes, and compact rows expanded to a node each.
    private func nodeList(_ json: inout JSONReader) throws -> [ObjectDiff] {
        var nodes: [ObjectDiff] = []
        try json.readArray { json in try node(&json, into: &nodes) }
        return nodes
    }

    /// One element of a node list: a full node, or a node of compact rows (those with `rows`).
    private func node(_ json: inout JSONReader, into nodes: inout [ObjectDiff]) throws {
        var entityName: String?, change: ChangeKind?, id: [IdentifierComponent]?
        var attributes: [String: AttributeChange] = [:], relationships: [String: RelationshipDiff] = [:]
        var rowsOffset: Int?
        var rowsRead = false
        var unread = 0
        let start = json.offset
        guard try json.peekKind() == .object else { throw json.error("expected a change (an object)") }
        try json.readObject { json, key in
            switch key {
            case "entityName": entityName = try Self.string(&json, "entityName")
            case "change": change = try Self.change(&json)
            case "id": id = try Self.identifier(&json)
            case "attributes": attributes = try Self.attributes(&json)
            case "relationships":
                if change == .insert && !readsInsertedMembers {
                    unread = try countMembers(inRelationships: &json)
                } else if change == nil && !readsInsertedMembers {
                    throw NotCountable()   // its kind comes later: read it whole
                } else {
                    relationships = try relationshipMap(&json)
                }
            case "rows":
                if let entityName, let change {
                    try rows(&json, entityName: entityName, change: change, into: &nodes)
                    rowsRead = true
                } else {
                    rowsOffset = json.offset
                    try json.skipValue()
                }
            default: try json.skipValue()
            }
        }
        if rowsRead { return }
        guard let entityName else { throw json.error("the change has no \"entityName\"", at: start) }
        guard let change else { throw json.error("the change of \(entityName) has no \"change\"", at: start) }
        if let rowsOffset {
            let end = json.offset
            json.seek(to: rowsOffset)
            try rows(&json, entityName: entityName, change: change, into: &nodes)
            json.seek(to: end)
            return
        }
        guard let id else { throw json.error("the change of \(entityName) has no \"id\"", at: start) }
        var node = ObjectDiff(entityName: entityName, id: id, change: change, attributes: attributes, relationships: relationships)
        node.unreadMembers = unread
        nodes.append(node)
    }

    /// Compact rows (`CompactRows`): one insert or delete per row, its identifier filled in later.
    private func rows(_ json: inout JSONReader, entityName: String, change: ChangeKind, into nodes: inout [ObjectDiff]) throws {
        guard change != .update else { throw json.error("rows stand for inserts or deletes, not updates") }
        guard let form = forms[entityName] else { throw json.error("compact rows of \(entityName), which the document's rows do not describe") }
        // A row's values are gathered first, so that its attributes are made at their size: a
        // dictionary grown value by value is rehashed on the way, one made for every column
        // (most are null) is twice the size, and a first import's undo holds one per object.
        var values: [(column: Int, value: DiffValue)] = []
        try json.readArray { json in
            var relationships: [String: RelationshipDiff] = [:]
            var unread = 0
            var column = 0
            values.removeAll(keepingCapacity: true)
            try json.readArray { json in
                // A row may end before its last column, its relationships after its last value.
                if column > form.columns.count {
                    try json.skipValue()   // the decoder ignores what follows the relationships
                } else if try Self.isRowRelationships(&json, column: column, of: form) {
                    column = form.columns.count
                    if change == .insert && !readsInsertedMembers {
                        unread = try countMembers(inRelationships: &json)
                    } else {
                        relationships = try relationshipMap(&json, required: true)
                    }
                } else {
                    let value = try Self.value(&json)
                    if !value.isNull { values.append((column, value)) }
                }
                column += 1
            }
            var attributes = [String: AttributeChange](minimumCapacity: values.count)
            for (column, value) in values {
                attributes[form.columns[column]] = change == .insert ? AttributeChange(old: .null, new: value) : AttributeChange(old: value, new: .null)
            }
            var node = ObjectDiff(entityName: entityName, id: [], change: change, attributes: attributes, relationships: relationships)
            node.unreadMembers = unread
            nodes.append(node)
        }
    }

    /// Whether the next element of a compact row, its `column`th, is its relationships rather
    /// than a value: the element after the last column, or before it an object that is not a
    /// tagged value (`DiffValue.isTaggedValue`). Reads nothing; looks no further than the
    /// object's second member.
    private static func isRowRelationships(_ json: inout JSONReader, column: Int, of form: CompactRows.Form) throws -> Bool {
        if column >= form.columns.count { return column == form.columns.count }
        guard try json.peekKind() == .object else { return false }
        let start = json.offset
        defer { json.seek(to: start) }
        var names: [String] = []
        do {
            try json.readObject { json, name in
                names.append(name)
                // A second member, or a first that is no tag: not a value, whatever follows.
                if names.count > 1 || !DiffValue.isTag(name) { throw SeenEnough() }
                try json.skipValue()
            }
        } catch is SeenEnough {}
        return !DiffValue.isTaggedValue(memberNames: names)
    }

    private struct SeenEnough: Error {}

    // MARK: Counting members

    /// The objects in a row's relationships (`{"name": {"members": [...]}, ...}`), nested ones
    /// included, read no further than needed to count them.
    private func countMembers(inRelationships json: inout JSONReader) throws -> Int {
        var count = 0
        guard try json.peekKind() == .object else { throw NotCountable() }
        try json.readObject { json, _ in
            guard try json.peekKind() == .object else { throw NotCountable() }
            try json.readObject { json, key in
                if key == "members", !(try json.readNull()) {
                    count += try countMembers(inList: &json)
                } else {
                    try json.skipValue()
                }
            }
        }
        return count
    }

    /// Skips a value of a counted member by its bytes: no string is made, only quotes, escapes
    /// and nesting are followed (what is counted is never applied but as a count: a malformed
    /// file shows when it is read whole).
    private func skipCounted(_ json: inout JSONReader) throws {
        guard let text else { return try json.skipValue() }
        var i = json.offset, depth = 0
        func isSpace(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
        }
        func isDelimiter(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: ":") || isSpace(byte)
        }
        while i < text.count && isSpace(text[i]) { i += 1 }
        repeat {
            guard i < text.count else { throw NotCountable() }
            switch text[i] {
            case UInt8(ascii: "\""):
                i += 1
                while i < text.count && text[i] != UInt8(ascii: "\"") { i += text[i] == UInt8(ascii: "\\") ? 2 : 1 }
                guard i < text.count else { throw NotCountable() }
                i += 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                guard depth >= 0 else { throw NotCountable() }
                i += 1
            case UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                guard depth > 0 else { throw NotCountable() }
                i += 1
            default:
                // A number, true, false or null.
                i += 1
                while i < text.count && !isDelimiter(text[i]) { i += 1 }
            }
        } while depth > 0
        json.seek(to: i)
    }

    /// The objects of a member list of inserts: a node each, a row each for compact rows.
    private func countMembers(inList json: inout JSONReader) throws -> Int {
        var count = 0
        guard try json.peekKind() == .array else { throw NotCountable() }
        try json.readArray { json in
            var change: ChangeKind?, form: CompactRows.Form?, hasRows = false
            guard try json.peekKind() == .object else { throw NotCountable() }
            try json.readObject { json, key in
                switch key {
                case "change":
                    change = try Self.change(&json)
                    if change != .insert { throw NotCountable() }
                case "entityName":
                    form = forms[try Self.string(&json, "entityName")]
                case "relationships":
                    guard change == .insert else { throw NotCountable() }
                    count += try countMembers(inRelationships: &json)
                case "rows":
                    // A change file writes a node's change and entity before its rows.
                    guard change == .insert, let form else { throw NotCountable() }
                    hasRows = true
                    try json.readArray { json in
                        count += 1
                        var column = 0
                        guard try json.peekKind() == .array else { throw NotCountable() }
                        try json.readArray { json in
                            if try Self.isRowRelationships(&json, column: column, of: form) {
                                column = form.columns.count
                                count += try countMembers(inRelationships: &json)
                            } else {
                                try skipCounted(&json)
                            }
                            column += 1
                        }
                    }
                default:
                    try json.skipValue()
                }
            }
            guard change == .insert else { throw NotCountable() }
            if !hasRows { count += 1 }   // a full node (its own members counted with its relationships)
        }
        return count
    }

    private func relationshipMap(_ json: inout JSONReader, required: Bool = false) throws -> [String: RelationshipDiff] {
        var map: [String: RelationshipDiff] = [:]
        if try json.readNull() {
            if required { throw json.error("expected a row's relationships (an object), found null") }
            return map
        }
        try json.readObject { json, name in map[name] = try relationship(&json) }
        return map
    }

    private func relationship(_ json: inout JSONReader) throws -> RelationshipDiff {
        var diff = RelationshipDiff()
        guard try json.peekKind() == .object else { throw json.error("expected a relationship's change (an object)") }
        try json.readObject { json, key in
            switch key {
            case "members": if !(try json.readNull()) { diff.members = try nodeList(&json) }
            case "added": diff.added = try Self.optionalArray(&json, Self.reference)
            case "removed": diff.removed = try Self.optionalArray(&json, Self.reference)
            default: try json.skipValue()
            }
        }
        return diff
    }

    // MARK: Parts

    private static func reference(_ json: inout JSONReader) throws -> ObjectReference {
        var entityName: String?, id: [IdentifierComponent]?
        let start = json.offset
        guard try json.peekKind() == .object else { throw json.error("expected a reference (an object)") }
        try json.readObject { json, key in
            switch key {
            case "entityName": entityName = try string(&json, "entityName")
            case "id": id = try identifier(&json)
            default: try json.skipValue()
            }
        }
        guard let entityName, let id else { throw json.error("a reference needs \"entityName\" and \"id\"", at: start) }
        return ObjectReference(entityName: entityName, id: id)
    }

    private static func attributes(_ json: inout JSONReader) throws -> [String: AttributeChange] {
        var attributes: [String: AttributeChange] = [:]
        if try json.readNull() { return attributes }
        try json.readObject { json, name in
            var change = AttributeChange(old: DiffValue.null, new: DiffValue.null)
            guard try json.peekKind() == .object else { throw json.error("expected the change of \(name) (an object)") }
            try json.readObject { json, key in
                switch key {
                case "old": change.old = try value(&json)
                case "new": change.new = try value(&json)
                default: try json.skipValue()
                }
            }
            attributes[name] = change
        }
        return attributes
    }

    private static func identifier(_ json: inout JSONReader) throws -> [IdentifierComponent] {
        guard try json.peekKind() == .array else { throw json.error("expected an identifier (an array)") }
        var id: [IdentifierComponent] = []
        try json.readArray { id.append(try value(&$0)) }
        return id
    }

    private static func change(_ json: inout JSONReader) throws -> ChangeKind {
        let start = json.offset
        let text = try string(&json, "change")
        guard let kind = ChangeKind(rawValue: text) else { throw json.error("\"\(text)\" is not insert, update or delete", at: start) }
        return kind
    }

    private static func string(_ json: inout JSONReader, _ what: String) throws -> String {
        guard try json.peekKind() == .string else { throw json.error("expected \(what) (a string)") }
        return try json.readString()
    }

    private static func strings(_ json: inout JSONReader, _ what: String) throws -> [String] {
        guard try json.peekKind() == .array else { throw json.error("expected an array of strings") }
        var out: [String] = []
        try json.readArray { out.append(try string(&$0, what)) }
        return out
    }

    /// An array that may be absent or null (empty then).
    private static func optionalArray<T>(_ json: inout JSONReader, _ element: (inout JSONReader) throws -> T) throws -> [T] {
        if try json.readNull() { return [] }
        guard try json.peekKind() == .array else { throw json.error("expected an array") }
        var out: [T] = []
        try json.readArray { out.append(try element(&$0)) }
        return out
    }

    /// A `DiffValue` as its `Decodable` conformance reads it: null, boolean, integer (a number
    /// that is a whole `Int64`, `1.0` included), string, other numbers as doubles, and the tagged
    /// objects `{"double": ...}`, `{"date": ...}`, `{"data": ...}`, in that order of precedence.
    static func value(_ json: inout JSONReader) throws -> DiffValue {
        let start = json.offset
        switch try json.peekKind() {
        case .object:
            break
        case .array:
            throw json.error("expected a value: null, string, integer, boolean, or {double|date|data: ...}")
        default:
            switch try json.readScalar() {
            case .null: return .null
            case .bool(let b): return DiffValue(.bool(b))
            case .integer(let i): return DiffValue(.integer(i))
            case .number(let d): return DiffValue(Int64(exactly: d).map(Value.integer) ?? .double(d))
            case .string(let s): return DiffValue(.string(s))
            }
        }
        var double: JSONReader.Scalar?, date: JSONReader.Scalar?, data: JSONReader.Scalar?
        try json.readObject { json, key in
            switch key {
            case "double": double = try json.readScalar()
            case "date": date = try json.readScalar()
            case "data": data = try json.readScalar()
            default: try json.skipValue()
            }
        }
        if let double {
            switch double {
            case .integer(let i): return DiffValue(.double(Double(i)))
            case .number(let d): return DiffValue(.double(d))
            case .string("nan"): return DiffValue(.double(.nan))
            case .string("inf"): return DiffValue(.double(.infinity))
            case .string("-inf"): return DiffValue(.double(-.infinity))
            default: throw json.error("not a double: \(double)", at: start)
            }
        }
        if let date {
            switch date {
            case .integer(let seconds): return DiffValue(.date(seconds))
            case .number(let d) where Int64(exactly: d) != nil: return DiffValue(.date(Int64(d)))
            case .string(let text):
                guard let seconds = UTCTime.parseISO8601(text) else { throw json.error("expected YYYY-MM-DDTHH:MM:SSZ, got '\(text)'", at: start) }
                return DiffValue(.date(seconds))
            default: throw json.error("not a date: \(date)", at: start)
            }
        }
        if let data {
            guard case .string(let text) = data, let bytes = Data(base64Encoded: text) else { throw json.error("not base64", at: start) }
            return DiffValue(.data([UInt8](bytes)))
        }
        throw json.error("expected a value: null, string, integer, boolean, or {double|date|data: ...}", at: start)
    }
}
