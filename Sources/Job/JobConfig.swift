import Foundation
import Feeds
import Fetch
import ObjectGraph
import Publish
import XMLTVExport
import XMLTVImport

/// One of the config's `playlists`.
public struct PlaylistOutput: Sendable, Hashable {
    public var m3u: String
    public var xmltv: String

    public init(m3u: String, xmltv: String) {
        self.m3u = m3u
        self.xmltv = xmltv
    }
}

/// The configuration of the nightly job, read from JSON (Foundation's parser: no extra
/// dependency, and every error can name the file, the key and what was expected).
public struct JobConfig: Sendable {
    public struct Source: Sendable {
        public var name: String
        /// An http(s) or file URL, or a local path (empty for a command source).
        public var url: String
        /// Seconds east of UTC that replace the zone the feed claims (for feeds known to lie).
        public var timeOffset: Int?
        public var includeChannels: Set<String>?
        public var excludeChannels: Set<String> = []
        /// Higher wins where sources overlap (CONTRACT.md, "Several sources, one guide"); nil
        /// when the config leaves it out (the database's remembered value, else 0).
        public var priority: Int?
        /// The bundled sample guide, moved to today so that it is always in the future.
        var isBundledSample = false
        /// A grabber whose standard output is the guide (instead of `url`).
        public var command: SourceCommand?

        /// The source as the import pipeline reads it.
        public var spec: SourceSpec {
            var spec = SourceSpec(name: name, inputs: [command.map { .command($0) } ?? (isBundledSample ? .bundledSample(url) : .fetched(url))])
            spec.timeOffset = timeOffset
            spec.includeChannels = includeChannels
            spec.excludeChannels = excludeChannels
            spec.priority = priority
            return spec
        }
    }

    public var path: String?
    public var database = "tvimport.sqlite"
    public var output = "feeds"
    public var cache: String?
    public var baseURL: String?
    public var uidDomain = "tvimport.invalid"
    public var retentionDays = 7
    public var maxDeleteShare = 0.2
    /// The most programme text one channel may hold in one guide, in MiB (memory follows it).
    public var maxChannelMB = 16
    public var pastHours = 24
    public var refreshHours = 12
    public var sources: [Source] = []
    /// Where change files go (`changes/` beside the database), and whether to write them.
    public var changes: String?
    public var changeFiles = true
    /// `run` removes change files older than this many days (0: keeps them all); the newest stays.
    public var changeFilesDays = 30
    /// Also write each change file as RFC 6902 JSON Patch (`<run-id>.patch.json`); otherwise
    /// `tvimport changes --patch RUN_ID` makes it on demand.
    public var changeFilesPatch = false
    public var changesDirectory: String { changes ?? ChangeFiles(database: database).directory }
    /// How downloads behave (retries, timeouts, size limit).
    public var fetchPolicy = FetchPolicy()
    public var filteredFeeds: [FilteredFeed] = []
    public var whitelists: [String: Set<String>] = [:]
    /// Source channel id → canonical channel id, from `"channels": {CANONICAL: {"aliases": [...]}}`.
    public var channelAliases: [String: String] = [:]
    public var modules: [ModelModule] = []
    /// The `modules` part of the file, as JSON: remembered in the database so that commands
    /// without a config (`edit`, `status`, `import`) still know the user's entities.
    public var modulesJSON: Data?
    /// Where the feeds are published (`publish.s3`); see PublishCommand.swift.
    public var publishTarget: ObjectStoreTarget?
    /// Where `run` writes the guide as one XMLTV file after each export (gzip when it ends in
    /// .gz), published beside the feeds.
    public var xmltv: String?
    /// `"playlists": [{"m3u": "LIST.m3u", "xmltv": "FILE.xml.gz"}]`: the guide of each playlist's
    /// channels, written by `run` after the XMLTV file (paths relative to the config file's folder).
    public var playlists: [PlaylistOutput] = []
    /// The top-level `"fill": {"hours": 2, "title": "{name}"}`: placeholders in playlists' guides.
    public var fill: PlaylistFill?
    /// `"channels": {ID: {"timeshiftOf": ORIGINAL, "hours": 1, "displayName": "..."}}`, by ID.
    public var timeshifts: [String: TimeshiftRule] = [:]
    /// `serve`: the edit token (`TVIMPORT_SERVE_TOKEN` wins over it), address and port.
    public var serveToken: String?
    public var serveHost: String?
    public var servePort: Int?

    /// The fetch cache: where each source's last good download is kept.
    public var cacheDirectory: String { cache ?? (database + ".cache") }

    public init() {}

    /// The configuration used when no --config is given: the bundled sample guide, no network.
    public static func bundledSample() throws -> JobConfig {
        guard let guide = bundledResource("sample-guide.xml") else {
            throw JobError(.config, "the bundled sample guide is missing: install it as /usr/local/share/tvimport/sample-guide.xml (README, Schedules) or give --config")
        }
        var config = JobConfig()
        config.sources = [Source(name: "sample", url: guide, isBundledSample: true)]
        config.filteredFeeds = [FilteredFeed(name: "news", title: "All the news", titlePattern: "\\bnews\\b")]
        config.applyEnvironment()
        return config
    }

    /// The feed exporter this configuration describes.
    public func exporter(store: Store, now: Int64) -> FeedExporter {
        FeedExporter(store: store, options: exportOptions(now: now))
    }

    public func exportOptions(output: String? = nil, now: Int64) -> ExportOptions {
        var options = ExportOptions(outputDirectory: output ?? self.output)
        options.uidDomain = uidDomain
        options.baseURL = baseURL
        options.pastWindow = Int64(pastHours) * 3600
        options.refreshInterval = refreshHours * 3600
        options.filteredFeeds = filteredFeeds
        options.now = now
        return options
    }

    /// A file of tvimport's resources: the bundle SwiftPM builds beside the executable (a build
    /// tree), else `../share/tvimport/` from the executable (an install under /usr/local), else
    /// `/usr/share/tvimport/`. (`Bundle.module` would crash the process when the bundle is missing
    /// instead of letting us say so.)
    static func bundledResource(_ name: String) -> String? {
        var candidates: [String] = []
        if let exe = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent() {
            let bundle = exe.appendingPathComponent("tvimport_Job.resources")
            candidates += [bundle.appendingPathComponent("Resources/" + name).path, bundle.appendingPathComponent(name).path,
                           exe.deletingLastPathComponent().appendingPathComponent("share/tvimport/" + name).path]
        }
        let bundle = Bundle.main.bundleURL.appendingPathComponent("tvimport_Job.resources")
        candidates += [bundle.appendingPathComponent("Resources/" + name).path, "/usr/share/tvimport/" + name]
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }

    /// The database when neither `--db` nor a config names one: `$TVIMPORT_DB`, else
    /// `./tvimport.sqlite` (where `run` with the bundled sample writes).
    public static func defaultDatabase(_ env: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let v = env["TVIMPORT_DB"], !v.isEmpty { return v }
        return JobConfig().database
    }

    /// Reads a config file; every problem names the file, the key and what was expected.
    /// `requireSources: false` is for commands that use the rest of it (`export`, and `import --config`,
    /// which takes only its aliases, whitelists and modules).
    public static func load(path: String, requireSources: Bool = true) throws -> JobConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw JobError(.config, "\(path): cannot read the configuration file")
        }
        let root = try ConfigJSON.parse(data, file: path)
        var reader = ConfigReader(file: path)
        reader.requireSources = requireSources
        var config = try reader.read(root)
        config.path = path
        config.applyEnvironment()
        return config
    }

    /// TVIMPORT_DB, TVIMPORT_OUTPUT, TVIMPORT_CACHE and TVIMPORT_BASE_URL override the file (containers).
    mutating func applyEnvironment(_ env: [String: String] = ProcessInfo.processInfo.environment) {
        if let v = env["TVIMPORT_DB"], !v.isEmpty { database = v }
        if let v = env["TVIMPORT_OUTPUT"], !v.isEmpty { output = v }
        if let v = env["TVIMPORT_CACHE"], !v.isEmpty { cache = v }
        if let v = env["TVIMPORT_BASE_URL"], !v.isEmpty { baseURL = v }
    }
}

/// Walks the JSON with a key path, so that errors say exactly where.
struct ConfigReader {
    let file: String
    var requireSources = true

    func fail(_ key: String, _ expected: String) -> JobError {
        JobError(.config, "\(file): key '\(key)': expected \(expected)")
    }

    func object(_ value: Any, _ key: String, allowed: Set<String>) throws -> [String: Any] {
        guard let d = value as? [String: Any] else { throw fail(key, "an object") }
        for k in d.keys.sorted() where !allowed.contains(k) {
            throw JobError(.config, "\(file): unknown key '\(key.isEmpty ? k : key + "." + k)' (known: \(allowed.sorted().joined(separator: ", ")))")
        }
        return d
    }
    /// JSON's true/false: Foundation on Linux bridges every NSNumber to Bool, so ask the type.
    static func isBoolean(_ n: NSNumber) -> Bool { String(describing: type(of: n)).contains("Boolean") }

    func string(_ v: Any?, _ key: String) throws -> String? {
        guard let v else { return nil }
        guard let s = v as? String else { throw fail(key, "a string") }
        return s
    }
    func number(_ v: Any?, _ key: String) throws -> Double? {
        guard let v else { return nil }
        guard let n = v as? NSNumber, !ConfigReader.isBoolean(n) else { throw fail(key, "a number") }
        return n.doubleValue
    }
    /// A whole number within `range` (a config's numbers become counts and durations that the
    /// code multiplies: anything outside would trap, or mean nothing); `what` says what is expected.
    func whole(_ v: Any?, _ key: String, in range: ClosedRange<Int64>, _ what: String) throws -> Int? {
        guard let n = try number(v, key) else { return nil }
        guard n.isFinite, n == n.rounded(), n >= Double(range.lowerBound), n <= Double(range.upperBound) else { throw fail(key, what) }
        return Int(n)
    }
    /// A finite number of seconds above 0 and at most a day.
    func seconds(_ v: Any?, _ key: String) throws -> Double? {
        guard let n = try number(v, key) else { return nil }
        guard n.isFinite, n > 0, n <= 86400 else { throw fail(key, "a number of seconds above 0 and at most 86400") }
        return n
    }
    func bool(_ v: Any?, _ key: String) throws -> Bool? {
        guard let v else { return nil }
        guard let n = v as? NSNumber, ConfigReader.isBoolean(n) else { throw fail(key, "true or false") }
        return n.boolValue
    }
    func strings(_ v: Any?, _ key: String) throws -> [String]? {
        guard let v else { return nil }
        guard let a = v as? [Any], a.allSatisfy({ $0 is String }) else { throw fail(key, "a list of strings") }
        return a as? [String]
    }
    func list(_ v: Any?, _ key: String) throws -> [Any] {
        guard let v else { return [] }
        guard let a = v as? [Any] else { throw fail(key, "a list") }
        return a
    }

    mutating func read(_ root: Any) throws -> JobConfig {
        let d = try object(root, "", allowed: ["database", "output", "cache", "baseURL", "uidDomain", "retentionDays", "maxDeleteShare", "maxChannelMB",
                                               "sources", "feeds", "whitelists", "modules", "fetch", "changes", "changeFiles", "changeFilesDays",
                                               "changeFilesPatch", "publish", "xmltv", "serve", "channels", "playlists", "fill"])
        var c = JobConfig()
        if let v = try string(d["database"], "database") { c.database = v }
        if let v = try string(d["output"], "output") { c.output = v }
        c.cache = try string(d["cache"], "cache")
        c.baseURL = try string(d["baseURL"], "baseURL")
        if let v = try string(d["uidDomain"], "uidDomain") { c.uidDomain = v }
        if let v = try whole(d["retentionDays"], "retentionDays", in: 0...36500, "a whole number of days, 0 or more (at most 36500)") {
            c.retentionDays = v
        }
        if let v = try number(d["maxChannelMB"], "maxChannelMB") {
            guard v >= 1, v <= 4096, v == v.rounded() else { throw fail("maxChannelMB", "a whole number of MiB from 1 to 4096") }
            c.maxChannelMB = Int(v)
        }
        if let v = try number(d["maxDeleteShare"], "maxDeleteShare") {
            guard (0...1).contains(v) else { throw fail("maxDeleteShare", "a share between 0 and 1 (0.2 is 20 %)") }
            c.maxDeleteShare = v
        }
        for (i, s) in try list(d["sources"], "sources").enumerated() {
            let key = "sources[\(i)]"
            let sd = try object(s, key, allowed: ["name", "url", "command", "timeoutSeconds", "timeOffset", "includeChannels", "excludeChannels", "priority"])
            guard let name = try string(sd["name"], key + ".name") else { throw fail(key + ".name", "a non-empty string") }
            if let problem = TimeshiftRule.problem(withSourceName: name) { throw fail(key + ".name", problem) }
            var source: JobConfig.Source
            if let arguments = try strings(sd["command"], key + ".command") {
                guard sd["url"] == nil else { throw fail(key, "either \"url\" or \"command\", not both") }
                source = JobConfig.Source(name: name, url: "")
                source.command = try SourceCommand(arguments: arguments, timeoutSeconds: try number(sd["timeoutSeconds"], key + ".timeoutSeconds"),
                                                   configFile: file, key: key + ".command")
            } else {
                guard let url = try string(sd["url"], key + ".url"), !url.isEmpty else { throw fail(key + ".url", "a URL or a path (or a \"command\")") }
                guard sd["timeoutSeconds"] == nil else { throw fail(key + ".timeoutSeconds", "no time limit without a \"command\"") }
                source = JobConfig.Source(name: name, url: url)
            }
            if let offset = try string(sd["timeOffset"], key + ".timeOffset") {
                guard let seconds = Self.parseOffset(offset) else { throw fail(key + ".timeOffset", "an offset such as +0100 or -05:00") }
                source.timeOffset = seconds
            }
            source.includeChannels = try strings(sd["includeChannels"], key + ".includeChannels").map(Set.init)
            source.excludeChannels = Set(try strings(sd["excludeChannels"], key + ".excludeChannels") ?? [])
            source.priority = try priority(sd["priority"], key + ".priority")
            c.sources.append(source)
        }
        if c.sources.isEmpty && requireSources { throw fail("sources", "at least one source") }
        c.channelAliases = try channelAliases(d["channels"])
        c.timeshifts = try timeshifts(d["channels"], aliases: c.channelAliases)
        for (i, item) in try list(d["playlists"], "playlists").enumerated() {
            let key = "playlists[\(i)]"
            let pd = try object(item, key, allowed: ["m3u", "xmltv"])
            guard let m3u = try string(pd["m3u"], key + ".m3u"), !m3u.isEmpty else { throw fail(key + ".m3u", "the path of an M3U playlist") }
            guard let xmltv = try string(pd["xmltv"], key + ".xmltv"), !xmltv.isEmpty else {
                throw fail(key + ".xmltv", "the path of the XMLTV file to write for it")
            }
            c.playlists.append(PlaylistOutput(m3u: relativeToConfig(m3u), xmltv: relativeToConfig(xmltv)))
        }
        if let f = d["fill"] {
            let fd = try object(f, "fill", allowed: ["hours", "title"])
            guard let hours = try number(fd["hours"], "fill.hours"), hours.isFinite, hours * 60 >= 1, hours <= 24 else {
                throw fail("fill.hours", "a number of hours from 1/60 (a minute) to 24")
            }
            c.fill = PlaylistFill(length: Int64((hours * 3600).rounded()), title: try string(fd["title"], "fill.title") ?? "{name}")
        }
        if let f = d["feeds"] {
            let fd = try object(f, "feeds", allowed: ["pastHours", "refreshHours", "filtered"])
            if let v = try whole(fd["pastHours"], "feeds.pastHours", in: 0...87600, "a whole number of hours from 0 to 87600") { c.pastHours = v }
            if let v = try whole(fd["refreshHours"], "feeds.refreshHours", in: 1...8760, "a whole number of hours from 1 to 8760") { c.refreshHours = v }
            for (i, item) in try list(fd["filtered"], "feeds.filtered").enumerated() {
                let key = "feeds.filtered[\(i)]"
                let id = try object(item, key, allowed: ["name", "title", "titlePattern", "categories", "channels", "show"])
                guard let name = try string(id["name"], key + ".name") else { throw fail(key + ".name", "a string") }
                let pattern = try string(id["titlePattern"], key + ".titlePattern")
                if let pattern, (try? NSRegularExpression(pattern: pattern)) == nil { throw fail(key + ".titlePattern", "a regular expression") }
                c.filteredFeeds.append(FilteredFeed(name: name, title: try string(id["title"], key + ".title"), titlePattern: pattern,
                                                    categories: try strings(id["categories"], key + ".categories"),
                                                    channels: try strings(id["channels"], key + ".channels"),
                                                    show: try string(id["show"], key + ".show")))
            }
        }
        c.changes = try string(d["changes"], "changes")
        if let v = try bool(d["changeFiles"], "changeFiles") { c.changeFiles = v }
        if let v = try bool(d["changeFilesPatch"], "changeFilesPatch") { c.changeFilesPatch = v }
        if let v = try whole(d["changeFilesDays"], "changeFilesDays", in: 0...36500, "a whole number of days, 0 (keep all) or more (at most 36500)") {
            c.changeFilesDays = v
        }
        if let f = d["fetch"] {
            let fd = try object(f, "fetch", allowed: ["retries", "maxBytes", "connectTimeout", "lowSpeedTime", "totalBudget", "userAgent"])
            if let v = try whole(fd["retries"], "fetch.retries", in: 0...100, "a whole number of retries from 0 to 100") { c.fetchPolicy.retries = v }
            if let v = try whole(fd["maxBytes"], "fetch.maxBytes", in: 1...(1 << 50), "a whole number of bytes above 0 (at most 2^50)") { c.fetchPolicy.maxBytes = Int64(v) }
            if let v = try seconds(fd["connectTimeout"], "fetch.connectTimeout") { c.fetchPolicy.connectTimeout = v }
            if let v = try whole(fd["lowSpeedTime"], "fetch.lowSpeedTime", in: 1...86400, "a whole number of seconds from 1 to 86400") { c.fetchPolicy.lowSpeedTime = v }
            if let v = try seconds(fd["totalBudget"], "fetch.totalBudget") { c.fetchPolicy.totalBudget = v }
            if let v = try string(fd["userAgent"], "fetch.userAgent") { c.fetchPolicy.userAgent = v }
        }
        if let w = d["whitelists"] {
            let wd = try object(w, "whitelists", allowed: ["Channel", "Programme", "Credit", "Category"])
            for (entity, keys) in wd { c.whitelists[entity] = Set(try strings(keys, "whitelists.\(entity)") ?? []) }
        }
        if let v = d["serve"] {
            let sd = try object(v, "serve", allowed: ["token", "host", "port"])
            c.serveToken = try string(sd["token"], "serve.token")
            c.serveHost = try string(sd["host"], "serve.host")
            if let port = try number(sd["port"], "serve.port") {
                guard port >= 0, port <= 65535, port == port.rounded() else { throw fail("serve.port", "a port number from 0 to 65535") }
                c.servePort = Int(port)
            }
        }
        c.modules = try modules(d["modules"])
        if let p = d["publish"] { c.publishTarget = try publishTarget(p) }
        c.xmltv = try string(d["xmltv"], "xmltv")
        if let m = d["modules"] { c.modulesJSON = ConfigJSON.text(of: m).map { Data($0) } }
        return c
    }

    func modules(_ value: Any?) throws -> [ModelModule] {
        try list(value, "modules").enumerated().map { i, m in try module(m, "modules[\(i)]") }
    }

    func module(_ value: Any, _ key: String) throws -> ModelModule {
        let d = try object(value, key, allowed: ["name", "entities"])
        guard let name = try string(d["name"], key + ".name") else { throw fail(key + ".name", "a string") }
        var entities: [EntityDescription] = []
        for (i, e) in try list(d["entities"], key + ".entities").enumerated() {
            let ek = "\(key).entities[\(i)]"
            let ed = try object(e, ek, allowed: ["name", "placeholder", "parent", "identifier", "attributes", "relationships"])
            guard let entityName = try string(ed["name"], ek + ".name") else { throw fail(ek + ".name", "a string") }
            var attributes: [AttributeDescription] = []
            for (j, a) in try list(ed["attributes"], ek + ".attributes").enumerated() {
                let ak = "\(ek).attributes[\(j)]"
                let ad = try object(a, ak, allowed: ["name", "type", "optional"])
                guard let an = try string(ad["name"], ak + ".name") else { throw fail(ak + ".name", "a string") }
                guard let t = try string(ad["type"], ak + ".type"), let type = AttributeType(rawValue: t) else {
                    throw fail(ak + ".type", "one of " + AttributeType.allCases.map(\.rawValue).joined(separator: ", "))
                }
                attributes.append(AttributeDescription(an, type, optional: try bool(ad["optional"], ak + ".optional") ?? true))
            }
            var relationships: [RelationshipDescription] = []
            for (j, r) in try list(ed["relationships"], ek + ".relationships").enumerated() {
                let rk = "\(ek).relationships[\(j)]"
                let rd = try object(r, rk, allowed: ["name", "destination", "inverse", "toMany", "deleteRule"])
                guard let rn = try string(rd["name"], rk + ".name"), let dest = try string(rd["destination"], rk + ".destination") else {
                    throw fail(rk, "name and destination strings")
                }
                let ruleName = try string(rd["deleteRule"], rk + ".deleteRule") ?? "nullify"
                guard let rule = DeleteRule(rawValue: ruleName) else { throw fail(rk + ".deleteRule", "cascade, nullify or deny") }
                relationships.append(RelationshipDescription(rn, destination: dest, inverse: try string(rd["inverse"], rk + ".inverse"),
                                                             toMany: try bool(rd["toMany"], rk + ".toMany") ?? false, deleteRule: rule))
            }
            entities.append(EntityDescription(entityName, parent: try string(ed["parent"], ek + ".parent"),
                                              placeholder: try bool(ed["placeholder"], ek + ".placeholder") ?? false,
                                              identifier: try strings(ed["identifier"], ek + ".identifier"),
                                              attributes: attributes, relationships: relationships))
        }
        return ModelModule(name, entities: entities)
    }

    static func parseOffset(_ s: String) -> Int? {
        let t = s.replacingOccurrences(of: ":", with: "")
        guard let sign = t.first, sign == "+" || sign == "-", t.count == 5 || t.count == 3, let n = Int(t.dropFirst()) else { return nil }
        let hours = t.count == 5 ? n / 100 : n, minutes = t.count == 5 ? n % 100 : 0
        guard hours <= 14, minutes < 60 else { return nil }
        return (sign == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)
    }
}
