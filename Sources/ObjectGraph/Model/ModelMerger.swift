/// One problem found while merging modules, naming the modules involved.
public struct ModelProblem: Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public enum Kind: String, Sendable {
        /// Two modules with one name, or one entity defined by two modules (one should declare it
        /// as a placeholder).
        case nameCollision = "name collision"
        /// A relationship names an entity no module declares.
        case unresolvedDestination = "unresolved destination"
        /// A relationship's inverse does not point back at it.
        case inverseMismatch = "inverse mismatch"
        /// Two modules declare one attribute with different types, or a default of the wrong type.
        case conflictingAttribute = "conflicting attribute"
        /// Two modules declare the same relationship differently.
        case conflictingRelationship = "conflicting relationship"
        /// An entity only ever declared as a placeholder: no module defines it.
        case placeholderWithoutEntity = "placeholder without entity"
        /// A parent entity that is missing, or a cycle of parents.
        case invalidInheritance = "invalid inheritance"
        /// An identifier (or overwritable) key that is not one of the entity's properties.
        case invalidIdentifier = "invalid identifier"
        /// An entity or property name that does not start with a letter, or holds other than
        /// letters, digits and `_`.
        case invalidName = "invalid name"
        /// Something the store does not do yet: a to-many without an inverse, many-to-many.
        case unsupported = "unsupported"
    }
    /// What went wrong.
    public let kind: Kind
    /// A sentence naming the entity and property.
    public let message: String
    /// The modules involved.
    public let modules: [String]

    public var description: String { "\(kind.rawValue): \(message)" }
}

/// A model that could not be built, with every problem at once.
public struct ModelError: Error, Sendable, CustomStringConvertible {
    /// Every problem found, not only the first.
    public let problems: [ModelProblem]
    public var description: String {
        "the entity model is invalid (\(problems.count) problem\(problems.count == 1 ? "" : "s")):\n"
            + problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}

extension ObjectModel {
    /// Merges modules into one model (docs/design.md#models-from-modules): placeholders are dropped, the attributes and
    /// relationships they carry are united into the real entity, and destinations, inverses and
    /// sub-entities are resolved by name. Every problem is collected before failing, so a user
    /// fixing a config file sees them all at once.
    public init(merging modules: [ModelModule]) throws(ModelError) {
        var problems: [ModelProblem] = []
        func problem(_ kind: ModelProblem.Kind, _ message: String, _ modules: [String]) {
            problems.append(ModelProblem(kind: kind, message: message, modules: Array(Set(modules)).sorted()))
        }

        // 1. Group declarations by entity name, in module order.
        var order: [String] = []
        var declarations: [String: [(module: String, entity: EntityDescription)]] = [:]
        var moduleNames = Set<String>()
        for module in modules {
            if !moduleNames.insert(module.name).inserted {
                problem(.nameCollision, "two modules are named '\(module.name)'", [module.name])
            }
            for entity in module.entities {
                if declarations[entity.name] == nil { order.append(entity.name) }
                declarations[entity.name, default: []].append((module.name, entity))
            }
        }

        // 2. One real definition per name; placeholders contribute properties.
        struct Draft {
            var module: String
            var description: EntityDescription
            var attributes: [(AttributeDescription, String)] = []
            var relationships: [(RelationshipDescription, String)] = []
        }
        var drafts: [String: Draft] = [:]
        for name in order {
            let decls = declarations[name]!
            let real = decls.filter { !$0.entity.isPlaceholder }
            if !isValidName(name) {
                problem(.invalidName, "entity name '\(name)' must start with a letter and use letters, digits and _",
                        decls.map(\.module))
            }
            if real.count > 1 {
                problem(.nameCollision, "entity '\(name)' is defined by modules \(real.map { "'\($0.module)'" }.joined(separator: " and ")); "
                        + "one of them should declare it as a placeholder", real.map(\.module))
                continue
            }
            guard let definition = real.first else {
                problem(.placeholderWithoutEntity,
                        "entity '\(name)' is only a placeholder (in \(decls.map { "'\($0.module)'" }.joined(separator: ", "))) and no module defines it",
                        decls.map(\.module))
                continue
            }
            var draft = Draft(module: definition.module, description: definition.entity)
            // The definition first, then each placeholder's contributions, in module order.
            for (module, entity) in [definition] + decls.filter({ $0.entity.isPlaceholder }) {
                for attribute in entity.attributes {
                    if let existing = draft.attributes.first(where: { $0.0.name == attribute.name }) {
                        if existing.0.type != attribute.type {
                            problem(.conflictingAttribute,
                                    "\(name).\(attribute.name) is \(existing.0.type.rawValue) in module '\(existing.1)' but \(attribute.type.rawValue) in module '\(module)'",
                                    [existing.1, module])
                        } else if existing.1 == module {
                            problem(.nameCollision, "\(name).\(attribute.name) is declared twice in module '\(module)'", [module])
                        }
                        continue
                    }
                    if draft.relationships.contains(where: { $0.0.name == attribute.name }) {
                        problem(.nameCollision, "\(name).\(attribute.name) is both an attribute (module '\(module)') and a relationship",
                                [module] + draft.relationships.filter { $0.0.name == attribute.name }.map(\.1))
                        continue
                    }
                    draft.attributes.append((attribute, module))
                }
                for relationship in entity.relationships {
                    if let existing = draft.relationships.first(where: { $0.0.name == relationship.name }) {
                        let a = existing.0, b = relationship
                        if a.destination != b.destination || a.isToMany != b.isToMany || (a.inverse != nil && b.inverse != nil && a.inverse != b.inverse) {
                            problem(.conflictingRelationship,
                                    "\(name).\(b.name) is \(describe(a)) in module '\(existing.1)' but \(describe(b)) in module '\(module)'",
                                    [existing.1, module])
                        }
                        continue
                    }
                    if let clash = draft.attributes.first(where: { $0.0.name == relationship.name }) {
                        problem(.nameCollision, "\(name).\(relationship.name) is both an attribute (module '\(clash.1)') and a relationship (module '\(module)')",
                                [clash.1, module])
                        continue
                    }
                    draft.relationships.append((relationship, module))
                }
            }
            for (attribute, module) in draft.attributes where !isValidName(attribute.name) {
                problem(.invalidName, "\(name).\(attribute.name): property names must start with a letter", [module])
            }
            for (attribute, module) in draft.attributes where !attribute.defaultValue.fits(attribute.type) {
                problem(.conflictingAttribute, "\(name).\(attribute.name): default \(attribute.defaultValue) is not a \(attribute.type.rawValue)", [module])
            }
            drafts[name] = draft
        }

        // 3. Inheritance: parents exist, no cycles, no property hides an inherited one.
        func ancestors(_ name: String) -> [String]? {
            var chain: [String] = []
            var current = drafts[name]?.description.parent
            while let p = current {
                if p == name || chain.contains(p) { return nil }
                chain.append(p)
                current = drafts[p]?.description.parent
            }
            return chain
        }
        for name in order {
            guard let draft = drafts[name], let parent = draft.description.parent else { continue }
            if drafts[parent] == nil {
                let where_ = declarations[parent]?.map(\.module) ?? []
                problem(.invalidInheritance, "entity '\(name)' (module '\(draft.module)') has parent '\(parent)', which no module defines"
                        + placeholderNote(where_), [draft.module] + where_)
            } else if ancestors(name) == nil {
                problem(.invalidInheritance, "entity '\(name)' (module '\(draft.module)') is its own ancestor", [draft.module])
            }
        }
        // Carry on even with problems, so that the user sees every problem at once: an entity whose
        // parent is missing or cyclic simply inherits nothing below.
        func validParent(_ name: String) -> String? {
            guard let p = drafts[name]?.description.parent, drafts[p] != nil, ancestors(name) != nil else { return nil }
            return p
        }

        // 4. Flatten inherited properties (ancestors first).
        func allAttributes(_ name: String) -> [(AttributeDescription, String, String)] {
            let draft = drafts[name]!
            let inherited = validParent(name).map(allAttributes) ?? []
            return inherited + draft.attributes.map { ($0.0, $0.1, name) }
        }
        func allRelationships(_ name: String) -> [(RelationshipDescription, String, String)] {
            let draft = drafts[name]!
            let inherited = validParent(name).map(allRelationships) ?? []
            return inherited + draft.relationships.map { ($0.0, $0.1, name) }
        }
        func isKind(_ name: String, of other: String) -> Bool {
            name == other || (ancestors(name) ?? []).contains(other)
        }
        let names = order.filter { drafts[$0] != nil }
        for name in names {
            let attributes = allAttributes(name)
            let relationships = allRelationships(name)
            var seen: [String: String] = [:]
            for (a, module, _) in attributes {
                if let m = seen[a.name] { problem(.nameCollision, "\(name).\(a.name) hides an inherited property (modules '\(m)' and '\(module)')", [m, module]) }
                seen[a.name] = module
            }
            for (r, module, _) in relationships {
                if let m = seen[r.name] { problem(.nameCollision, "\(name).\(r.name) hides an inherited property (modules '\(m)' and '\(module)')", [m, module]) }
                seen[r.name] = module
            }
        }

        // 5. Destinations and inverses.
        for name in names {
            for (r, module, declaring) in drafts[name]!.relationships.map({ ($0.0, $0.1, name) }) {
                guard drafts[r.destination] != nil else {
                    let decls = declarations[r.destination] ?? []
                    // A destination defined twice is already reported as a name collision.
                    if decls.contains(where: { !$0.entity.isPlaceholder }) { continue }
                    problem(.unresolvedDestination,
                            "\(declaring).\(r.name) (module '\(module)') points to '\(r.destination)', which no module defines"
                            + placeholderNote(decls.map(\.module)), [module] + decls.map(\.module))
                    continue
                }
                guard let inverseName = r.inverse else {
                    if r.isToMany {
                        problem(.unsupported, "\(declaring).\(r.name) (module '\(module)') is to-many without an inverse; declare the to-one inverse on '\(r.destination)'", [module])
                    }
                    continue
                }
                let destinationRelationships = allRelationships(r.destination)
                guard let (inv, invModule, _) = destinationRelationships.first(where: { $0.0.name == inverseName }) else {
                    problem(.inverseMismatch,
                            "\(declaring).\(r.name) (module '\(module)') names inverse '\(r.destination).\(inverseName)', which does not exist (entity '\(r.destination)' is defined by module '\(drafts[r.destination]!.module)')",
                            [module, drafts[r.destination]!.module])
                    continue
                }
                if !isKind(declaring, of: inv.destination) && !isKind(inv.destination, of: declaring) {
                    problem(.inverseMismatch,
                            "\(declaring).\(r.name) (module '\(module)') and its inverse \(r.destination).\(inverseName) (module '\(invModule)') disagree: the inverse points to '\(inv.destination)'",
                            [module, invModule])
                } else if let back = inv.inverse, back != r.name {
                    problem(.inverseMismatch,
                            "\(declaring).\(r.name) (module '\(module)') names inverse \(r.destination).\(inverseName), whose inverse is '\(back)' (module '\(invModule)')",
                            [module, invModule])
                } else if r.isToMany && inv.isToMany {
                    problem(.unsupported, "\(declaring).\(r.name) and \(r.destination).\(inverseName) are many-to-many, which the store does not support yet (modules '\(module)', '\(invModule)')",
                            [module, invModule])
                }
            }
        }

        // 6. Identifiers and whitelists name existing keys.
        for name in names {
            let draft = drafts[name]!
            let attributes = allAttributes(name)
            let relationships = allRelationships(name)
            let identifier = splitList(inheritedInfo(name, UserInfoKey.identifier, drafts.mapValues(\.description))) ?? []
            for key in identifier where !attributes.contains(where: { $0.0.name == key })
                && !relationships.contains(where: { $0.0.name == key && !$0.0.isToMany }) {
                problem(.invalidIdentifier, "entity '\(name)' (module '\(draft.module)') has identifier key '\(key)', which is not one of its attributes or to-one relationships", [draft.module])
            }
            for key in splitList(inheritedInfo(name, UserInfoKey.overwrite, drafts.mapValues(\.description))) ?? []
            where !attributes.contains(where: { $0.0.name == key }) && !relationships.contains(where: { $0.0.name == key }) {
                problem(.invalidIdentifier, "entity '\(name)' (module '\(draft.module)') lists '\(key)' as overwritable, but has no such property", [draft.module])
            }
        }
        guard problems.isEmpty else { throw ModelError(problems: problems) }

        // 7. Build the resolved entities.
        var entities: [Entity] = []
        for name in names {
            let draft = drafts[name]!
            var root = name
            while let p = drafts[root]!.description.parent { root = p }
            func descendants(_ n: String) -> [String] {
                [n] + names.filter { drafts[$0]!.description.parent == n }.flatMap(descendants)
            }
            let attributes = allAttributes(name).map { a, module, declaring in
                Attribute(name: a.name, type: a.type, isOptional: a.isOptional, defaultValue: a.defaultValue,
                          userInfo: a.userInfo, module: module, declaringEntity: declaring)
            }
            let relationships = allRelationships(name).map { r, module, declaring in
                var storesKey = false
                if !r.isToMany {
                    if let invName = r.inverse, let inv = allRelationships(r.destination).first(where: { $0.0.name == invName })?.0 {
                        if inv.isToMany {
                            storesKey = true
                        } else if (r.deleteRule == .cascade) != (inv.deleteRule == .cascade) {
                            storesKey = inv.deleteRule == .cascade   // the owned side keeps the key
                        } else {
                            storesKey = (declaring, r.name) < (r.destination, invName)
                        }
                    } else {
                        storesKey = true
                    }
                }
                return Relationship(name: r.name, destination: r.destination, inverse: r.inverse, isToMany: r.isToMany,
                                    deleteRule: r.deleteRule, isOptional: r.isOptional, userInfo: r.userInfo,
                                    module: module, declaringEntity: declaring, storesForeignKey: storesKey)
            }
            let definingModules = Set([draft.module] + (ancestors(name) ?? []).map { drafts[$0]!.module })
            let overwritable = splitList(inheritedInfo(name, UserInfoKey.overwrite, drafts.mapValues(\.description)))
                .map(Set.init) ?? Set(attributes.filter { definingModules.contains($0.module) }.map(\.name))
            entities.append(Entity(
                ordinal: entities.count, name: name, module: draft.module, parent: draft.description.parent,
                subentities: names.filter { drafts[$0]!.description.parent == name },
                rootName: root, isAbstract: draft.description.isAbstract,
                attributes: attributes, relationships: relationships, userInfo: draft.description.userInfo,
                identifier: splitList(inheritedInfo(name, UserInfoKey.identifier, drafts.mapValues(\.description))) ?? [],
                overwritable: overwritable, descendants: descendants(name)))
        }
        self.init(entities: entities, modules: modules.map(\.name))
    }
}

private func inheritedInfo(_ name: String, _ key: String, _ descriptions: [String: EntityDescription]) -> String? {
    var current: String? = name
    var seen = Set<String>()
    while let n = current, seen.insert(n).inserted, let d = descriptions[n] {
        if let v = d.userInfo[key] { return v }
        current = d.parent
    }
    return nil
}

private func placeholderNote(_ modules: [String]) -> String {
    let names = Array(Set(modules)).sorted()
    return names.isEmpty ? "" : " (only placeholders, in \(names.map { "module '\($0)'" }.joined(separator: ", ")))"
}

private func describe(_ r: RelationshipDescription) -> String {
    "\(r.isToMany ? "to-many" : "to-one") \(r.destination)\(r.inverse.map { " (inverse \($0))" } ?? "")"
}

func isValidName(_ name: String) -> Bool {
    guard let first = name.unicodeScalars.first, first.properties.isAlphabetic else { return false }
    return name.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
}
