import Foundation
import Hummingbird
import Job
import ObjectGraph
import Primitives

/// The interface generated from the entity model (seed 002, "Generating an interface for an
/// entity"): for every entity of the merged model, user modules included, a paged, sortable,
/// filterable list and a page per object with every attribute, its to-one relationships as links
/// and its to-many members listed. Nothing here names an entity or an attribute: what is shown
/// and what is editable comes from the `Entity` descriptions alone.
struct ModelPages: Sendable {
    let state: ServeState
    static let pageSize = 50
    /// The pages a list sorted by a chosen key shows (`?sort=`): its first 5,000 objects.
    static let maxSortedPage = 100
    /// Columns of a list besides the identifier (a programme has some forty attributes).
    static let listColumns = 8
    static let shownMembers = 100

    var model: ObjectModel { state.model }

    // MARK: Which attributes users may edit

    /// Local attributes: no import writes them (not in the entity's whitelist, nor in the
    /// config's), and `tvimport edit` would set them without --force.
    func isEditable(_ attribute: Attribute, of entity: Entity) -> Bool {
        guard attribute.type != .data, (try? EditCommand.editableAttribute(attribute.name, of: entity, force: true)) != nil else { return false }
        return !(state.options.whitelists[entity.name] ?? entity.overwritable).contains(attribute.name)
    }

    // MARK: Index

    func index(_ request: Request) -> Response {
        Pages.html(HTML.page(title: "Model", signedIn: signedIn(request), tokenConfigured: state.canEdit) { page in
            page.raw("<p>Modules: ")
            page.text(model.modules.joined(separator: ", "))
            page.raw("</p><ul>")
            for entity in model.entities {
                page.raw("<li><a href=\"/model/")
                page.text(HTML.urlComponent(entity.name))
                page.raw("\">")
                page.text(entity.name)
                page.raw("</a> <small>module ")
                page.text(entity.module)
                page.raw("</small></li>")
            }
            page.raw("</ul>")
        })
    }

    // MARK: Many

    func list(_ request: Request, entityName: String) async throws -> Response {
        guard let entity = model.entity(entityName) else { return Pages.error(.notFound, "No entity \(entityName) in the model.") }
        let query = FormData(request.uri.query ?? "")
        guard let pageNumber = RequestInput.page(query["page"]) else {
            return Pages.error(.badRequest, "page must be a whole number from 1 to \(RequestInput.maxPage).")
        }
        let sortKey = query["sort"].flatMap { entity.rowIndex(of: $0) != nil ? $0 : nil }
        let descending = query["desc"] == "1"
        // A page of a list sorted by a key without an index makes SQLite sort every row before
        // it: 6 s for page 9,000 of half a million programmes sorted by description.
        if let sortKey, pageNumber > Self.maxSortedPage {
            return Pages.error(.badRequest, "A list sorted by \(sortKey) shows its first \(Self.maxSortedPage) pages: filter it (?KEY=VALUE) to see the rest, or leave the sort out.")
        }
        // Filters: any attribute (typed as the model says) or to-one relationship (the target's
        // identifier as `tvimport edit` takes it, `RTE2.ie`, or its row id, `#12` or `12`).
        var predicates: [ObjectPredicate] = []
        var filters: [(String, String)] = []
        var relatedFilters: [(name: String, relationship: Relationship, value: String)] = []
        for name in query.names.sorted() where name != "page" && name != "sort" && name != "desc" {
            guard let value = query[name] else { continue }
            if let attribute = entity.attribute(name) {
                do {
                    predicates.append(.compare(name, .equal, try EditCommand.parse(value, as: attribute, entity: entity)))
                } catch let error as JobError {
                    return Pages.error(.badRequest, error.message)
                }
            } else if let relationship = entity.relationship(name), relationship.storesForeignKey {
                guard value.utf8.count <= 1024 else { return Pages.error(.badRequest, "\(entity.name).\(name): an identifier of at most 1024 bytes.") }
                relatedFilters.append((name, relationship, value))
            } else {
                return Pages.error(.badRequest, "\(entity.name) has no attribute or to-one relationship '\(name)' to filter by.")
            }
            filters.append((name, value))
        }
        if !relatedFilters.isEmpty {
            let wanted = relatedFilters
            let resolved = try await state.reads.read { context -> [ObjectPredicate?] in
                try wanted.map { filter -> ObjectPredicate? in
                    guard let destination = model.entity(filter.relationship.destination) else { return nil }
                    let target = (try? EditCommand.find(destination, filter.value, context))
                        ?? RequestInput.digits(filter.value, maxDigits: 18).flatMap { row in
                            try? context.object(ObjectID(entity: destination.name, rowID: Int64(row)), keys: [])?.id
                        }
                    return target.map { .related(filter.name, ObjectID(entity: filter.relationship.destination, rowID: $0.rowID)) }
                }
            }
            for (filter, predicate) in zip(relatedFilters, resolved) {
                guard let predicate else {
                    return Pages.error(.notFound, "No \(filter.relationship.destination) \(Self.shortened(filter.value)) to filter \(entity.name).\(filter.name) by (give its identifier or #row id).")
                }
                predicates.append(predicate)
            }
        }
        let displays = ModelDisplay(model: model)
        let columns = columns(of: entity)
        let keys = columns + displays.keys(of: entity).filter { !columns.contains($0) }
        let sort = (sortKey.map { [SortKey($0, ascending: !descending)] } ?? entity.identifier.filter { entity.rowIndex(of: $0) != nil }.map { SortKey($0) })
        let predicate = ObjectPredicate.and(predicates)
        let (paging, rows, targets) = try await state.reads.read { context -> (Paging, [FetchedObject], [String: [Int64: String]]) in
            let paging = Paging(page: pageNumber, total: try context.count(entity.name, where: predicate), pageSize: Self.pageSize)
            // A page past the end reads nothing; any other reads its rows alone.
            guard !paging.isPastTheEnd else { return (paging, [], [:]) }
            let rows = try context.fetchAll(entity.name, where: predicate, orderBy: sort, keys: keys, limit: Self.pageSize, offset: paging.offset)
            // Each to-one column shows its targets by their display, fetched once per column.
            var targets: [String: [Int64: String]] = [:]
            for key in columns {
                if let relationship = entity.relationship(key) { targets[key] = try displays.targets(of: rows, through: relationship, context: context) }
            }
            return (paging, rows, targets)
        }
        let (page, total, lastPage) = (paging.page, paging.total, paging.lastPage)
        let filterQuery = filters.map { "\(HTML.urlComponent($0.0))=\(HTML.urlComponent($0.1))" }
        func link(page: Int, sort: String?, descending: Bool) -> String {
            var parts = filterQuery
            if let sort { parts.append("sort=\(HTML.urlComponent(sort))") }
            if descending { parts.append("desc=1") }
            if page > 1 { parts.append("page=\(page)") }
            return "/model/\(HTML.urlComponent(entity.name))" + (parts.isEmpty ? "" : "?" + parts.joined(separator: "&"))
        }
        return Pages.html(HTML.page(title: entity.name, signedIn: signedIn(request), tokenConfigured: state.canEdit, wide: true) { html in
            html.raw("<p>")
            html.text("\(total) object\(total == 1 ? "" : "s")")
            for (name, value) in filters {
                html.text(" · \(Self.shortened(name)) = \(Self.shortened(value))")
            }
            html.raw("</p><div class=\"scroll\"><table class=\"list\"><tr><th>")
            html.text(entity.name)
            html.raw("</th>")
            for key in columns {
                html.raw("<th><a href=\"")
                html.text(link(page: 1, sort: key, descending: key == sortKey && !descending))
                html.raw("\">")
                html.text(key + (key == sortKey ? (descending ? " ↓" : " ↑") : ""))
                html.raw("</a></th>")
            }
            html.raw("</tr>")
            for row in rows {
                html.raw("<tr><td><a href=\"")
                html.text(Self.detailPath(entity: row.id.entity, rowID: row.id.rowID))
                html.raw("\">")
                html.text(displays.text(of: row, entity: model.entity(row.id.entity) ?? entity))
                html.raw("</a></td>")
                for key in columns {
                    html.raw("<td>")
                    if let relationship = entity.relationship(key), let target = row.related(key) {
                        html.raw("<a href=\"")
                        html.text(Self.detailPath(entity: relationship.destination, rowID: target.rowID))
                        html.raw("\">")
                        html.text(targets[key]?[target.rowID] ?? "\(relationship.destination) #\(target.rowID)")
                        html.raw("</a>")
                    } else if case .date(let seconds) = row[key] {
                        html.text(LocalTime.day(seconds) + " " + LocalTime.hourMinute(seconds))
                    } else {
                        html.text(Self.shortened(display(row, key: key, entity: entity)))
                    }
                    html.raw("</td>")
                }
                html.raw("</tr>")
            }
            html.raw("</table></div><p class=\"pager\">")
            if page > 1 {
                html.raw("<a href=\"")
                html.text(link(page: page - 1, sort: sortKey, descending: descending))
                html.raw("\">← Previous</a>")
            }
            html.text("Page \(page) of \(lastPage)")
            let lastShown = sortKey == nil ? min(lastPage, RequestInput.maxPage) : min(lastPage, Self.maxSortedPage)
            if sortKey != nil && lastShown < lastPage { html.text(" (sorted: the first \(lastShown) pages)") }
            if page < lastShown {
                html.raw(" <a href=\"")
                html.text(link(page: page + 1, sort: sortKey, descending: descending))
                html.raw("\">Next →</a>")
            }
            html.raw("</p>")
        })
    }

    /// A list's columns after the display one: the identifier keys that are columns, then the
    /// first other attributes, bookkeeping left out, and what the display always shows.
    func columns(of entity: Entity) -> [String] {
        let displays = ModelDisplay(model: model)
        let shown = displays.parts(of: entity).filter { $0.count == 1 }.map { $0[0] }
        let identifier = entity.identifier.filter { key in
            entity.rowIndex(of: key) != nil && !shown.contains(key) && !(entity.attribute(key).map { displays.isDetail($0, of: entity) } ?? false)
        }
        let others = entity.attributes.filter {
            !identifier.contains($0.name) && !shown.contains($0.name) && $0.type != .data && !displays.isDetail($0, of: entity)
        }.map(\.name)
        return identifier + others.prefix(Self.listColumns)
    }

    static func detailPath(entity: String, rowID: Int64) -> String {
        "/model/\(HTML.urlComponent(entity))/%23\(rowID)"
    }

    /// A list cell or a member's label.
    static func shortened(_ text: String) -> String { HTMLText.shortened(text, to: 120) }

    /// A value shown (not edited) on an object's page: long enough for any real description,
    /// short enough that a hostile feed cannot make the page megabytes long.
    static let shownCharacters = 10_000

    func display(_ object: FetchedObject, key: String, entity: Entity) -> String {
        let value = object[key]
        if case .date(let seconds) = value { return UTCTime.iso8601(seconds) }
        if entity.relationship(key) != nil, let row = value.integerValue { return "#\(row)" }
        return value.isNull ? "" : value.description
    }

    // MARK: One

    /// Finds the object named by the rest of the path: `#ROWID` (what the pages link to) or the
    /// identifier as `tvimport edit` takes it (`bbc1.uk`, `bbc1.uk/20261122030000`).
    func find(_ entity: Entity, rawID: Substring, _ context: ObjectContext) throws -> ObjectID? {
        let id = RequestInput.percentDecoded(rawID) ?? String(rawID)
        guard !id.isEmpty else { return nil }
        return try? EditCommand.find(entity, id, context)
    }

    func detail(_ request: Request, entityName: String, rawID: Substring, message: (text: String, isError: Bool)? = nil,
                status: HTTPResponse.Status = .ok) async throws -> Response {
        guard let entity = model.entity(entityName) else { return Pages.error(.notFound, "No entity \(entityName) in the model.") }
        struct Member { let entity: String, rowID: Int64, label: String }
        let displays = ModelDisplay(model: model)
        let found = try await state.reads.read { context -> (FetchedObject, [String: [Member]], [String: Int], [String: String])? in
            guard let id = try find(entity, rawID: rawID, context), let object = try context.object(id) else { return nil }
            let concrete = model.entity(id.entity) ?? entity
            var members: [String: [Member]] = [:], counts: [String: Int] = [:], targets: [String: String] = [:]
            for relationship in concrete.relationships where relationship.isToMany {
                guard let destination = model.entity(relationship.destination), let inverse = relationship.inverse,
                      destination.relationship(inverse)?.storesForeignKey == true else { continue }
                counts[relationship.name] = try context.count(destination.name, where: .related(inverse, id))
                // In the order of the destination's identifier (a channel's programmes by start).
                let order = destination.identifier.filter { $0 != inverse && destination.rowIndex(of: $0) != nil }.map { SortKey($0) }
                members[relationship.name] = try context.fetchAll(destination.name, where: .related(inverse, id), orderBy: order,
                                                                  keys: displays.keys(of: destination), limit: Self.shownMembers).map { m in
                    Member(entity: m.id.entity, rowID: m.id.rowID, label: displays.text(of: m, entity: model.entity(m.id.entity) ?? destination))
                }
            }
            for relationship in concrete.relationships where !relationship.isToMany {
                if let text = try displays.targets(of: [object], through: relationship, context: context).values.first { targets[relationship.name] = text }
            }
            return (object, members, counts, targets)
        }
        guard let (object, members, counts, targets) = found else {
            return Pages.error(.notFound, "No \(entity.name) with identifier \(RequestInput.percentDecoded(rawID) ?? String(rawID)).")
        }
        let concrete = model.entity(object.id.entity) ?? entity
        let credential = state.sessions.credential(of: request)
        var csrf: String?
        if case .session(let token) = credential { csrf = token }
        let editing = csrf != nil
        let path = Self.detailPath(entity: concrete.name, rowID: object.id.rowID)
        // What "Undo" would revert, named on its button (an import is confirmed on the next page).
        let database = state.options.database
        let newest = editing ? ((try? await BlockingWork.run { try ApplyCommand.newestChange(database: database) }) ?? nil) : nil
        let title = displays.text(of: object, entity: concrete)
        // After a save (`?saved=NAME,…`): the values now stored, and the way back.
        let saved = (FormData(request.uri.query ?? "")["saved"] ?? "").split(separator: ",").prefix(64)
            .compactMap { concrete.attribute(String($0)) }
        return Pages.html(HTML.page(title: title, signedIn: editing, tokenConfigured: state.canEdit) { html in
            html.raw("<p class=\"kind\">")
            html.text(concrete.name)
            html.raw("</p>")
            if let message {
                html.trusted(message.isError ? "<p class=\"error\">" : "<p class=\"notice\">")
                html.text(message.text)
                html.raw("</p>")
            }
            if !saved.isEmpty && message == nil {
                html.raw("<div class=\"notice\" role=\"status\"><p>Saved: ")
                html.text(saved.map { "\($0.name) = “\(Self.shortened(display(object, key: $0.name, entity: concrete)))”" }.joined(separator: ", "))
                html.raw(".</p>")
                if editing {
                    undoForm(csrf: csrf ?? "", back: path, label: newest.map { "Undo \($0.about)" + ($0.kind == .edit ? "" : "…") } ?? "Undo", into: &html)
                }
                html.raw("</div>")
            }
            if editing {
                html.raw("<form method=\"post\" action=\"")
                html.text(path)
                html.raw("\"><input type=\"hidden\" name=\"csrf\" value=\"")
                html.text(csrf ?? "")
                html.raw("\">")
            } else if state.canEdit {
                html.raw("<p><a href=\"/login\">Sign in</a> to edit the local attributes.</p>")
            }
            func row(_ attribute: Attribute, into html: inout HTML) {
                html.raw("<tr><th>")
                html.text(attribute.name)
                html.raw("</th><td>")
                if editing && isEditable(attribute, of: concrete) {
                    input(for: attribute, value: object[attribute.name], into: &html)
                } else {
                    html.text(HTMLText.shortened(display(object, key: attribute.name, entity: concrete), to: Self.shownCharacters))
                }
                html.raw(" <small>")
                html.text(attribute.type.rawValue + (attribute.isOptional ? "?" : "") + " · " + attribute.module)
                html.raw("</small></td></tr>")
            }
            html.raw("<div class=\"scroll\"><table>")
            for relationship in concrete.relationships where !relationship.isToMany {
                html.raw("<tr><th>")
                html.text(relationship.name)
                html.raw("</th><td>")
                if let target = object.related(relationship.name) {
                    html.raw("<a href=\"")
                    html.text(Self.detailPath(entity: relationship.destination, rowID: target.rowID))
                    html.raw("\">")
                    html.text(targets[relationship.name] ?? "\(relationship.destination) #\(target.rowID)")
                    html.raw("</a>")
                }
                html.raw("</td></tr>")
            }
            for attribute in concrete.attributes where !displays.isDetail(attribute, of: concrete) { row(attribute, into: &html) }
            html.raw("</table></div>")
            let details = concrete.attributes.filter { displays.isDetail($0, of: concrete) }
            if !details.isEmpty {
                // Bookkeeping (hashes, counters, clump numbers, sequence): there, but folded away.
                html.raw("<details><summary>Details</summary><div class=\"scroll\"><table>")
                for attribute in details { row(attribute, into: &html) }
                html.raw("</table></div></details>")
            }
            if editing {
                html.raw("<p><button type=\"submit\">Save</button></p></form>")
            }
            for relationship in concrete.relationships where relationship.isToMany {
                guard let list = members[relationship.name] else { continue }
                html.raw("<h2>")
                html.text("\(relationship.name) (\(counts[relationship.name] ?? list.count))")
                html.raw("</h2><ul>")
                for member in list {
                    html.raw("<li><a href=\"")
                    html.text(Self.detailPath(entity: member.entity, rowID: member.rowID))
                    html.raw("\">")
                    html.text(member.label.isEmpty ? "#\(member.rowID)" : member.label)
                    html.raw("</a></li>")
                }
                html.raw("</ul>")
                if let inverse = relationship.inverse, (counts[relationship.name] ?? 0) > list.count {
                    html.raw("<p><a href=\"/model/")
                    html.text(HTML.urlComponent(relationship.destination) + "?" + HTML.urlComponent(inverse) + "=\(object.id.rowID)")
                    html.raw("\">All of them</a></p>")
                }
            }
            if editing {
                undoForm(csrf: csrf ?? "", back: path, label: newest.map { "Undo \($0.about)" + ($0.kind == .edit ? "" : "…") } ?? "Undo the last change",
                         into: &html)
                html.raw("<form method=\"post\" action=\"/redo\"><input type=\"hidden\" name=\"csrf\" value=\"")
                html.text(csrf ?? "")
                html.raw("\"><input type=\"hidden\" name=\"back\" value=\"")
                html.text(path)
                html.raw("\"><button type=\"submit\">Redo</button></form>")
            }
        }, status: status)
    }

    /// The button that undoes the newest change, named by `label`, coming back to `back`.
    func undoForm(csrf: String, back: String, label: String, into html: inout HTML) {
        html.raw("<form method=\"post\" action=\"/undo\"><input type=\"hidden\" name=\"csrf\" value=\"")
        html.text(csrf)
        html.raw("\"><input type=\"hidden\" name=\"back\" value=\"")
        html.text(back)
        html.raw("\"><button type=\"submit\">")
        html.text(label)
        html.raw("</button></form>")
    }

    /// The form value of a stored value, as the input shows it (and as a save compares it).
    static func formValue(_ value: Value, type: AttributeType) -> String {
        switch value {
        case .null: return type == .bool ? "false" : ""
        case .date(let seconds): return String(UTCTime.iso8601(seconds).dropLast())   // datetime-local: no zone, UTC
        default: return value.description
        }
    }

    /// The input for an attribute's type: boolean a checkbox, numbers number fields, a date a
    /// datetime-local field (UTC), text a text field.
    func input(for attribute: Attribute, value: Value, into html: inout HTML) {
        let name = HTMLText.escape(attribute.name)
        let current = HTMLText.escape(Self.formValue(value, type: attribute.type))
        switch attribute.type {
        case .bool:
            // An unticked box sends nothing: the hidden "false" before it stands in.
            html.trusted("<input type=\"hidden\" name=\"\(name)\" value=\"false\"><input type=\"checkbox\" name=\"\(name)\" value=\"true\" aria-label=\"\(name)\"\(value.boolValue == true ? " checked" : "")>")
        case .integer:
            html.trusted("<input type=\"number\" step=\"1\" name=\"\(name)\" value=\"\(current)\" aria-label=\"\(name)\">")
        case .double:
            html.trusted("<input type=\"number\" step=\"any\" name=\"\(name)\" value=\"\(current)\" aria-label=\"\(name)\">")
        case .date:
            html.trusted("<input type=\"datetime-local\" step=\"1\" name=\"\(name)\" value=\"\(current)\" aria-label=\"\(name)\"> UTC")
        case .string, .data:
            html.trusted("<input type=\"text\" name=\"\(name)\" value=\"\(current)\" aria-label=\"\(name)\">")
        }
    }

    // MARK: Saving

    func signedIn(_ request: Request) -> Bool {
        if case .none = state.sessions.credential(of: request) { return false }
        return true
    }

    /// Checks the token (401 without it) and, for a session, the form's CSRF token (403).
    func authorize(_ request: Request, _ form: FormData) -> Response? {
        guard state.canEdit else { return Pages.error(.forbidden, "This server is read-only: no token is configured.") }
        switch state.sessions.credential(of: request) {
        case .none:
            return Pages.error(.unauthorized, "Sign in (or send the token as a bearer header) to edit.")
        case .bearer:
            return nil
        case .session(let csrf):
            return Sessions.constantTimeEqual(form[Sessions.csrfField] ?? "", csrf) ? nil : Pages.error(.forbidden, "The form's CSRF token is missing or stale: reload the page.")
        }
    }

    /// Saves the changed local attributes through `tvimport edit`'s code path (the model's types
    /// validate each value; a bad one is a 400 that names it and nothing is saved), recorded as
    /// a change file so that undo reverts it.
    func save(_ request: Request, entityName: String, rawID: Substring) async throws -> Response {
        let form = try await Routes.form(request, limit: state.options.maxBodyBytes)
        if let refusal = authorize(request, form) { return refusal }
        guard let entity = model.entity(entityName) else { return Pages.error(.notFound, "No entity \(entityName) in the model.") }
        let current = try await state.reads.read { context -> FetchedObject? in
            try find(entity, rawID: rawID, context).flatMap { try context.object($0) }
        }
        guard let object = current else { return Pages.error(.notFound, "No such \(entity.name).") }
        let concrete = model.entity(object.id.entity) ?? entity
        var assignments: [String] = []
        for name in form.names.sorted() where name != Sessions.csrfField {
            guard let attribute = concrete.attribute(name) else {
                return Pages.error(.badRequest, "\(concrete.name) has no attribute '\(name)'.")
            }
            guard isEditable(attribute, of: concrete) else {
                return Pages.error(.badRequest, "\(concrete.name).\(name) is not editable here (an import writes it, or tvimport keeps it).")
            }
            var submitted = form[name] ?? ""
            guard submitted != Self.formValue(object[name], type: attribute.type) else { continue }
            switch attribute.type {
            case .date where !submitted.isEmpty:
                // datetime-local has no zone (the form says UTC); a script may send one, which counts.
                guard let instant = RequestInput.instant(submitted) else {
                    return Pages.error(.badRequest, "\(concrete.name).\(name) expects a date and time such as 2026-11-27T20:15 (UTC) or 2026-11-27T20:15+01:00, got '\(Self.shortened(submitted))'.")
                }
                if case .date(instant) = object[name] { continue }
                submitted = UTCTime.iso8601(instant)
            case .double where !submitted.isEmpty:
                guard RequestInput.finiteNumber(submitted) != nil else {
                    return Pages.error(.badRequest, "\(concrete.name).\(name) expects a finite number, got '\(Self.shortened(submitted))'.")
                }
            default:
                break
            }
            assignments.append("\(name)=\(submitted)")
        }
        let path = Self.detailPath(entity: concrete.name, rowID: object.id.rowID)
        if assignments.isEmpty { return Pages.redirect(path) }
        let (database, entityName, id, userModules, finalAssignments) = (state.options.database, concrete.name, "#\(object.id.rowID)",
                                                                           state.options.userModules, assignments)
        let changes = state.options.config?.changesDirectory
        do {
            // A write transaction and a change file: blocking, so on the thread pool.
            _ = try await BlockingWork.run {
                var edit = EditCommand(database: database, entityName: entityName, id: id)
                edit.assignments = finalAssignments
                edit.force = true   // isEditable has applied the stricter rule (the config's whitelists too)
                edit.userModules = userModules
                edit.recordsChange = true
                edit.changesDirectory = changes
                _ = try edit.run()
            }
        } catch {
            // A busy database (a run holding it) is a conflict to try again, as a held lock is.
            guard let error = error as? JobError ?? JobError(error) else { throw error }
            state.metrics.countEdit(failed: true)
            let status: HTTPResponse.Status = error.status == .tempFail ? .conflict : .badRequest
            return try await detail(request, entityName: concrete.name, rawID: Substring("%23\(object.id.rowID)"), message: (error.message, true), status: status)
        }
        state.metrics.countEdit(failed: false)
        _ = await refreshOutputs()
        // The page it comes back to says what is stored now and offers the undo.
        let names = assignments.compactMap { $0.split(separator: "=", maxSplits: 1).first.map(String.init) }
        return Pages.redirect(path + "?saved=" + names.map(HTML.urlComponent).joined(separator: ","))
    }

    /// Reverts the newest change (an edit, an import, a run), as `tvimport undo` does, or
    /// re-applies the last one undone (`ApplyCommand.redo`). An edit is undone at once, and the
    /// page names its object and attribute; an import or a run first gets a page that names its
    /// source, time and counts, whose button sends `confirm=RUNID`: only that change is undone
    /// then, never one that came between. The config's outputs follow (`DerivedOutputs`).
    func undoOrRedo(_ request: Request, redo: Bool) async throws -> Response {
        let form = try await Routes.form(request, limit: state.options.maxBodyBytes)
        if let refusal = authorize(request, form) { return refusal }
        let back = form["back"].flatMap { $0.hasPrefix("/model/") ? $0 : nil }
        let database = state.options.database
        var confirmed: String?
        if !redo {
            let newest: ChangeRegister.Description?
            do {
                newest = try await BlockingWork.run { try ApplyCommand.newestChange(database: database) }
            } catch let error as JobError {
                return notice("Undo", error.message, failed: true, back: back)
            }
            guard let newest else { return notice("Undo", "Nothing to undo.", failed: true, back: back) }
            if newest.kind != .edit {
                guard form["confirm"] == newest.runID else { return confirmation(newest, form: form, back: back) }
                confirmed = newest.runID
            }
        }
        let result: String
        let failed: Bool
        do {
            let (output, status) = try await BlockingWork.run { [confirmed] in
                redo ? try ApplyCommand.redo(database: database) : try ApplyCommand.undo(database: database, expecting: confirmed)
            }
            (result, failed) = (output, status != .success)
        } catch {
            guard let error = error as? JobError ?? JobError(error) else { throw error }
            (result, failed) = (error.message, true)
        }
        var lines = [result]
        if !failed { lines += await refreshOutputs() }
        return notice(redo ? "Redo" : "Undo", lines.joined(separator: "\n"), failed: failed, back: back)
    }

    /// The config's outputs rewritten after a change made here; what each output says.
    func refreshOutputs() async -> [String] {
        let database = state.options.database
        guard let config = state.options.config ?? LastRunOutputs.config(forDatabase: database) else { return [] }
        return (try? await BlockingWork.run { DerivedOutputs.refresh(config: config, database: database).lines }) ?? []
    }

    /// The page that asks before an import or a run is undone.
    func confirmation(_ change: ChangeRegister.Description, form: FormData, back: String?) -> Response {
        Pages.html(HTML.page(title: "Undo \(change.kind?.rawValue ?? "change")?", signedIn: true, tokenConfigured: true) { html in
            html.raw("<p>Undo ")
            html.text(change.about)
            html.raw(", made ")
            html.text(change.time)
            html.raw("? Every programme it inserted, updated or deleted goes back as it was; the next run imports each source again.</p>")
            html.raw("<form method=\"post\" action=\"/undo\"><input type=\"hidden\" name=\"csrf\" value=\"")
            html.text(form[Sessions.csrfField] ?? "")
            html.raw("\"><input type=\"hidden\" name=\"confirm\" value=\"")
            html.text(change.runID)
            html.raw("\">")
            if let back {
                html.raw("<input type=\"hidden\" name=\"back\" value=\"")
                html.text(back)
                html.raw("\">")
            }
            html.raw("<button type=\"submit\">")
            html.text(change.kind == .run ? "Undo this run" : "Undo this import")
            html.raw("</button></form>")
            html.raw("<p><a href=\"")
            html.text(back ?? "/model")
            html.raw("\">Cancel</a></p>")
        }, status: .ok)
    }

    func notice(_ title: String, _ text: String, failed: Bool, back: String?) -> Response {
        Pages.html(HTML.page(title: title, signedIn: true, tokenConfigured: true) { html in
            for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
                html.trusted(failed ? "<p class=\"error\">" : "<p class=\"notice\">")
                html.text(String(line))
                html.raw("</p>")
            }
            if let back {
                html.raw("<p><a href=\"")
                html.text(back)
                html.raw("\">Back</a></p>")
            }
        }, status: failed ? .conflict : .ok)
    }
}
