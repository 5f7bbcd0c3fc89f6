import ObjectGraph

/// The tvimport entity model: the merge of its modules (docs/design.md#models-from-modules).
///
/// - `listings`: what comes from XMLTV feeds. Only these attributes are ever written by an import
///   (each entity's `overwrite` list is its whitelist on update).
/// - `local`: what only users set (`tvimport edit`), through placeholders of listings' entities.
/// - `feeds`: the bookkeeping the iCalendar exporter needs (when a programme's exported content
///   last changed, its SEQUENCE), also through placeholders.
/// Users may add modules of their own from the config file.
public enum TVModel {
    /// The keys an import writes and the XMLTV export reads, in mapping order: Channel's and
    /// Programme's feed attributes, and the members of a programme's credits and categories.
    public static let channelKeys = channelFeedAttributes.map(\.name)
    public static let programmeKeys = programmeFeedAttributes.map(\.name)
    public static let creditKeys = ["role", "name", "character", "isGuest", "position", "images"]
    public static let categoryKeys = ["name", "lang", "position"]

    /// Attributes of Programme that come from the feed, in mapping order (see `ProgrammeMapper`).
    public static let programmeFeedAttributes: [AttributeDescription] = [
        .init("start", .date, optional: false),
        .init("clumpIndex", .integer, optional: false, default: .integer(0)),
        // Not indexed: an index on it took a tenth of a first import (its rows arrive in no stop
        // order); retention finds what ended through each channel's identity index (`NightlyJob.prune`).
        .init("stop", .date),
        .init("clumpCount", .integer, optional: false, default: .integer(1)),
        .init("title", .string),
        .init("subTitle", .string),
        .init("desc", .string),
        .init("otherLanguages", .string),      // titles, sub-titles, descs in further languages, "lang\ttext" lines
        .init("date", .string),
        .init("keywords", .string),
        .init("language", .string),
        .init("originalLanguage", .string),
        .init("length", .integer),             // seconds
        .init("icon", .string),
        .init("url", .string),
        .init("country", .string),
        .init("episodeNum", .string),          // every system, "system=raw" lines
        .init("season", .integer),             // one-based
        .init("seasonCount", .integer),
        .init("episode", .integer),            // one-based
        .init("episodeCount", .integer),
        .init("part", .integer),
        .init("partCount", .integer),
        .init("video", .string),
        .init("audio", .string),
        .init("previouslyShown", .bool, optional: false, default: .bool(false)),
        .init("previouslyShownStart", .string),
        .init("premiere", .bool, optional: false, default: .bool(false)),
        .init("lastChance", .bool, optional: false, default: .bool(false)),
        .init("isNew", .bool, optional: false, default: .bool(false)),
        .init("subtitles", .string),
        .init("rating", .string),              // "system=value" lines
        .init("starRating", .string),
        // Images (docs/design.md#images): `icon` above is the first <icon>'s URL, what pages and
        // feeds show; `icons` keeps every <icon> with its size when `icon` alone does not say it all.
        .init("icons", .string),              // "width\theight\tsrc" lines (a size empty when absent)
        .init("images", .string),             // DTD 0.6 <image>: "type\tsize\torient\tsystem\tsrc" lines
    ]

    /// The bookkeeping of a programme that generated pages fold under "details": the clump
    /// numbers, where it came from, and the raw forms that other attributes show readably.
    static let programmeDetails = "clumpIndex,clumpCount,source,episodeNum,otherLanguages"

    public static let channelFeedAttributes: [AttributeDescription] = [
        .init("xmltvId", .string, optional: false),
        .init("displayName", .string),
        .init("otherNames", .string),
        .init("icon", .string),
        .init("url", .string),
        .init("icons", .string),               // as Programme's
    ]

    static let creditAttributes: [AttributeDescription] = [
        .init("role", .string, optional: false),
        .init("name", .string, optional: false),
        .init("character", .string),
        .init("isGuest", .bool, optional: false, default: .bool(false)),
        .init("position", .integer, optional: false, default: .integer(0)),
        .init("images", .string),              // as Programme's: a person's or character's pictures
    ]

    static let categoryAttributes: [AttributeDescription] = [
        .init("name", .string, optional: false),
        .init("lang", .string, optional: false, default: .string("")),
        .init("position", .integer, optional: false, default: .integer(0)),
    ]

    public static let listings = ModelModule("listings", entities: [
        EntityDescription(
            "Channel", identifier: ["xmltvId"],
            overwritable: ["displayName", "otherNames", "icon", "url", "icons"],
            attributes: channelFeedAttributes + [
                .init("source", .string),
                // Denormalised aggregates kept by an observer (the design's (docs/design.md#to-many-relationships-and-fetching-no-more-than-needed) booksCount).
                .init("programmeCount", .integer, optional: false, default: .integer(0), userInfo: [UserInfoKey.diff: "exclude"]),
                .init("programmesChangedAt", .date, userInfo: [UserInfoKey.diff: "exclude"]),
            ],
            relationships: [.toMany("programmes", "Programme", inverse: "channel", deleteRule: .cascade)],
            userInfo: [UserInfoKey.display: "customName|displayName|xmltvId", UserInfoKey.details: "source,otherNames"]),
        EntityDescription(
            "Programme", identifier: ["channel", "start", "clumpIndex"],
            overwritable: programmeFeedAttributes.map(\.name).filter { $0 != "start" && $0 != "clumpIndex" } + ["credits", "categories"],
            attributes: programmeFeedAttributes + [
                // Indexed: the safety guard counts a source's programmes before every import.
                .init("source", .string, userInfo: [UserInfoKey.index: "true"]),
                .init("contentHash", .integer, userInfo: [UserInfoKey.diff: "exclude"]),
            ],
            relationships: [
                .toOne("channel", "Channel", inverse: "programmes", deleteRule: .nullify, optional: false),
                .toMany("credits", "Credit", inverse: "programme", deleteRule: .cascade),
                .toMany("categories", "Category", inverse: "programme", deleteRule: .cascade),
            ],
            userInfo: ["hash": "contentHash", UserInfoKey.display: "title,start", UserInfoKey.details: programmeDetails]),
        EntityDescription(
            "Credit", identifier: ["programme", "role", "name"],
            overwritable: ["character", "isGuest", "position", "images"],
            attributes: creditAttributes,
            relationships: [.toOne("programme", "Programme", inverse: "credits", deleteRule: .nullify, optional: false)],
            userInfo: [UserInfoKey.display: "name,role", UserInfoKey.details: "position"]),
        EntityDescription(
            "Category", identifier: ["programme", "name", "lang"],
            overwritable: ["position"],
            attributes: categoryAttributes,
            relationships: [.toOne("programme", "Programme", inverse: "categories", deleteRule: .nullify, optional: false)],
            userInfo: [UserInfoKey.display: "name", UserInfoKey.details: "position,lang"]),
    ])

    public static let local = ModelModule("local", entities: [
        .placeholder("Channel", attributes: [
            .init("hidden", .bool, optional: false, default: .bool(false)),
            .init("customName", .string),
            .init("color", .string),
            .init("favourite", .bool, optional: false, default: .bool(false)),
        ]),
        .placeholder("Programme", attributes: [
            .init("note", .string),
            .init("reminder", .bool, optional: false, default: .bool(false)),
        ]),
    ])

    public static let feeds = ModelModule("feeds", entities: [
        .placeholder("Programme", attributes: [
            .init("changedAt", .date, userInfo: [UserInfoKey.diff: "exclude"]),
            .init("sequence", .integer, optional: false, default: .integer(0), userInfo: [UserInfoKey.diff: "exclude"]),
        ]),
    ])

    /// Each source's own rows (docs/design.md#several-sources-one-guide): what its last applied
    /// import gave, merged with its own delete scope, history and safety guard. `Channel` and
    /// `Programme` above hold the shown guide, resolved from these rows by priority.
    public static let sources = ModelModule("sources", entities: [
        EntityDescription(
            "SourceChannel", identifier: ["source", "xmltvId"],
            overwritable: ["displayName", "otherNames", "icon", "url", "icons"],
            attributes: [.init("source", .string, optional: false)]
                // Indexed: the resolution gathers every source's rows of one canonical channel.
                + channelFeedAttributes.map { $0.name == "xmltvId" ? .init("xmltvId", .string, optional: false, userInfo: [UserInfoKey.index: "true"]) : $0 },
            relationships: [.toMany("programmes", "SourceProgramme", inverse: "channel", deleteRule: .cascade)],
            userInfo: [UserInfoKey.display: "displayName|xmltvId,source", UserInfoKey.details: "otherNames"]),
        EntityDescription(
            "SourceProgramme", identifier: ["channel", "start", "clumpIndex"],
            overwritable: programmeFeedAttributes.map(\.name).filter { $0 != "start" && $0 != "clumpIndex" } + ["credits", "categories"],
            attributes: programmeFeedAttributes + [
                .init("source", .string, userInfo: [UserInfoKey.index: "true"]),
                .init("contentHash", .integer, userInfo: [UserInfoKey.diff: "exclude"]),
            ],
            relationships: [
                .toOne("channel", "SourceChannel", inverse: "programmes", deleteRule: .nullify, optional: false),
                .toMany("credits", "SourceCredit", inverse: "programme", deleteRule: .cascade),
                .toMany("categories", "SourceCategory", inverse: "programme", deleteRule: .cascade),
            ],
            // The resolution reads every slot of a shared channel's other sources
            // (`GuideResolver.storedSlots`): from this index alone, no seek in the table per row.
            userInfo: ["hash": "contentHash", UserInfoKey.display: "title,start", UserInfoKey.details: programmeDetails,
                       UserInfoKey.coveringIndex: "channel,start,clumpIndex,stop,contentHash"]),
        EntityDescription(
            "SourceCredit", identifier: ["programme", "role", "name"],
            overwritable: ["character", "isGuest", "position", "images"],
            attributes: creditAttributes,
            relationships: [.toOne("programme", "SourceProgramme", inverse: "credits", deleteRule: .nullify, optional: false)],
            userInfo: [UserInfoKey.display: "name,role", UserInfoKey.details: "position"]),
        EntityDescription(
            "SourceCategory", identifier: ["programme", "name", "lang"],
            overwritable: ["position"],
            attributes: categoryAttributes,
            relationships: [.toOne("programme", "SourceProgramme", inverse: "categories", deleteRule: .nullify, optional: false)],
            userInfo: [UserInfoKey.display: "name", UserInfoKey.details: "position,lang"]),
    ])

    /// The built-in modules, in merge order.
    public static let builtInModules = [listings, local, feeds, sources]

    /// The merged model, with any user modules from the config.
    public static func model(userModules: [ModelModule] = []) throws(ModelError) -> ObjectModel {
        try ObjectModel(merging: builtInModules + userModules)
    }
}
