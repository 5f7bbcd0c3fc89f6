import Foundation
import XMLTVImport

/// The config's `"channels"` and `sources[].priority` (CONTRACT.md, "Several sources, one guide").
extension ConfigReader {
    /// `{"bbc1.uk": {"aliases": ["BBC1.HD", "bbcone.uk"]}}` as alias → canonical id. An alias
    /// claimed by two channels, or one that is itself a canonical id, is a configuration error:
    /// either would make the mapping depend on the order of the file.
    func channelAliases(_ value: Any?) throws -> [String: String] {
        guard let value else { return [:] }
        guard let channels = value as? [String: Any] else { throw fail("channels", "an object of canonical channel ids") }
        var aliases: [String: String] = [:]
        for canonical in channels.keys.sorted() {
            let key = "channels.\(canonical)"
            guard !canonical.isEmpty else { throw fail("channels", "non-empty channel ids") }
            let entry = try object(channels[canonical]!, key, allowed: ["aliases", "timeshiftOf", "hours", "displayName"])
            for alias in try strings(entry["aliases"], key + ".aliases") ?? [] where alias != canonical {
                guard !alias.isEmpty else { throw fail(key + ".aliases", "non-empty channel ids") }
                if let other = aliases[alias] {
                    throw fail(key + ".aliases", "ids that no other channel claims ('\(alias)' is an alias of '\(other)' too)")
                }
                if channels[alias] != nil {
                    throw fail(key + ".aliases", "source ids, not canonical ones ('\(alias)' is a channel of its own)")
                }
                aliases[alias] = canonical
            }
        }
        return aliases
    }

    /// The timeshifted channels of `"channels"`: `{"rte1plus1.ie": {"timeshiftOf": "RTEOne.ie",
    /// "hours": 1, "displayName": "RTÉ One +1"}}`. Hours are whole or half (negative allowed, at
    /// most 48 either way, never 0); the original is a canonical id (not an alias, not another
    /// timeshifted channel); a timeshifted channel has no aliases of its own (no source gives it).
    func timeshifts(_ value: Any?, aliases: [String: String]) throws -> [String: TimeshiftRule] {
        guard let channels = value as? [String: Any] else { return [:] }
        var rules: [String: TimeshiftRule] = [:]
        for id in channels.keys.sorted() {
            let key = "channels.\(id)"
            guard let entry = channels[id] as? [String: Any] else { continue }
            guard let original = try string(entry["timeshiftOf"], key + ".timeshiftOf") else {
                for extra in ["hours", "displayName"] where entry[extra] != nil {
                    throw fail(key + "." + extra, "only beside \"timeshiftOf\" (a timeshifted channel)")
                }
                continue
            }
            guard !original.isEmpty, original != id else { throw fail(key + ".timeshiftOf", "the id of another channel") }
            if let target = aliases[original] {
                throw fail(key + ".timeshiftOf", "a canonical id ('\(original)' is an alias of '\(target)')")
            }
            if entry["aliases"] != nil { throw fail(key + ".aliases", "none on a timeshifted channel (it is made from '\(original)', not read)") }
            guard let hours = try number(entry["hours"], key + ".hours"), hours.isFinite, hours != 0, abs(hours) <= 48,
                  (hours * 2).rounded() == hours * 2 else {
                throw fail(key + ".hours", "a number of hours, whole or half (0.5), not 0, from -48 to 48")
            }
            let displayName = try string(entry["displayName"], key + ".displayName")
            rules[id] = TimeshiftRule(channel: id, original: original, seconds: Int64(hours * 3600), displayName: displayName)
        }
        for (id, rule) in rules where rules[rule.original] != nil {
            throw fail("channels.\(id).timeshiftOf", "a channel that is not timeshifted itself ('\(rule.original)' is)")
        }
        return rules
    }

    /// A path of the config made relative to the config file's folder (absolute ones as they are),
    /// so that it names the same file from any working directory.
    func relativeToConfig(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        let folder = URL(fileURLWithPath: file).deletingLastPathComponent().path
        return folder + "/" + path
    }

    /// A whole number; nil when absent.
    func priority(_ value: Any?, _ key: String) throws -> Int? {
        guard let n = try number(value, key) else { return nil }
        guard n == n.rounded(), abs(n) <= 1_000_000 else { throw fail(key, "a whole number (higher wins; default 0)") }
        return Int(n)
    }
}
