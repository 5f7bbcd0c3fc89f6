import Listings
import Merge
import ObjectGraph

/// The merge layout of a programme with its credits and categories, written once for the three
/// places that merge programmes: a channel's own rows and a source's rows (`GuideImporter`), and
/// the shown rows (`GuideResolver`).
///
/// ```swift
/// let shown = try ListingsLayouts.programme(model, alsoWritten: ["source"], overwritable: whitelists)
/// let sourceRows = try ListingsLayouts.programme(model, entities: .sourceRows)
/// ```
enum ListingsLayouts {
    /// The entities a programme layout merges.
    struct Entities {
        var programme: String
        var credit: String
        var category: String
        static let shown = Entities(programme: "Programme", credit: "Credit", category: "Category")
        static let sourceRows = Entities(programme: "SourceProgramme", credit: "SourceCredit", category: "SourceCategory")
    }

    /// `alsoWritten`: keys merged beside the feed's and always written (the resolution's winning
    /// source); `overwritable`: the whitelists by entity name (absent: the entity's own).
    static func programme(_ model: ObjectModel, entities: Entities = .shown, alsoWritten: [String] = [],
                          overwritable: [String: Set<String>] = [:]) throws -> MergeLayout {
        let credit = try MergeLayout(entity: model.requireEntity(entities.credit), keys: ListingsMapper.creditKeys,
                                     parentKey: "programme", overwritable: overwritable[entities.credit])
        let category = try MergeLayout(entity: model.requireEntity(entities.category), keys: ListingsMapper.categoryKeys,
                                       parentKey: "programme", overwritable: overwritable[entities.category])
        let programme = try model.requireEntity(entities.programme)
        let whitelist = alsoWritten.isEmpty ? overwritable[entities.programme]
            : (overwritable[entities.programme] ?? Set(programme.overwritable)).union(alsoWritten)
        return try MergeLayout(entity: programme, keys: ListingsMapper.programmeKeys + alsoWritten, parentKey: "channel",
                               children: [("credits", credit), ("categories", category)], overwritable: whitelist)
    }
}
