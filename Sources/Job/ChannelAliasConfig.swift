import Foundation

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
            let entry = try object(channels[canonical]!, key, allowed: ["aliases"])
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

    /// A whole number; nil when absent.
    func priority(_ value: Any?, _ key: String) throws -> Int? {
        guard let n = try number(value, key) else { return nil }
        guard n == n.rounded(), abs(n) <= 1_000_000 else { throw fail(key, "a whole number (higher wins; default 0)") }
        return Int(n)
    }
}
