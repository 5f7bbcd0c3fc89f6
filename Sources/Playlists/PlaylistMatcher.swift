/// A shown channel of the guide, as the matcher sees it.
public struct GuideChannel: Sendable, Hashable {
    /// The canonical id.
    public var id: String
    /// Display names, the preferred first (a custom name may lead).
    public var names: [String]

    public init(id: String, names: [String]) {
        self.id = id
        self.names = names
    }
}

/// What a playlist entry was matched to, and why.
public struct PlaylistMatch: Sendable, Hashable {
    public var entry: PlaylistEntry
    /// The canonical id of the shown channel whose programmes the entry gets; nil when none matched.
    public var channel: String?
    /// Seconds the entry's programmes move: an iptv-org `@PlusN` feed's hours, and `tvg-shift`.
    public var shift: Int64
    /// Why, in words ("tvg-id is the channel's id", "tvg-name 'BBC One HD' = display name 'BBC One'", ...).
    public var reason: String
    /// For an entry that matched nothing: the display names nearest to its names, nearest first.
    public var nearest: [String]
}

/// Matches playlist entries to the shown channels by the contract's rules, in this order:
///
/// 1. `tvg-id` is a canonical id, or an alias of one;
/// 2. iptv-org's `ID@FEED` (`TG4.ie@SD`): ID is, unless FEED is `PlusN`;
/// 3. `tvg-id`, `tvg-name` or (without a `tvg-name`) the entry's title equals a display name
///    after normalisation (`ChannelNameKey`: a `+1` never matches the channel without it);
/// 4. `ID@PlusN` (`Bravo.nz@Plus1`) with no channel of its own by 1-3: ID, moved N hours later.
///
/// `tvg-shift` moves the entry's times on top of that.
///
/// ```swift
/// let matcher = PlaylistMatcher(channels: [GuideChannel(id: "bravo.nz", names: ["Bravo"])], aliases: [:])
/// let match = matcher.match(PlaylistEntry(line: 2, title: "Bravo +1", tvgID: "Bravo.nz@Plus1"))
/// ```
public struct PlaylistMatcher: Sendable {
    private let ids: Set<String>
    private let aliases: [String: String]
    /// Normalised display name → the channel and the name as written (the first channel by id order).
    private let byName: [ChannelNameKey: (id: String, name: String)]
    private let names: [(key: ChannelNameKey, name: String)]

    /// `channels` in the order ties go to (by id); `aliases` map source ids to canonical ids.
    public init(channels: [GuideChannel], aliases: [String: String]) {
        ids = Set(channels.map(\.id))
        self.aliases = aliases
        var byName: [ChannelNameKey: (id: String, name: String)] = [:]
        var names: [(ChannelNameKey, String)] = []
        for channel in channels {
            for name in channel.names {
                let key = ChannelNameKey(name)
                guard !key.isEmpty else { continue }
                if byName[key] == nil { byName[key] = (channel.id, name) }
                names.append((key, name))
            }
        }
        self.byName = byName
        self.names = names
    }

    /// The shown channel an id names: itself, or an alias's target.
    private func canonical(_ id: String) -> (id: String, how: String)? {
        if ids.contains(id) { return (id, "the channel's id") }
        if let target = aliases[id], ids.contains(target) { return (target, "an alias of \(target)") }
        return nil
    }

    /// iptv-org's `ID@FEED`, cut at the last "@".
    static func feed(_ tvgID: String) -> (id: String, feed: String)? {
        guard let at = tvgID.lastIndex(of: "@") else { return nil }
        let id = String(tvgID[..<at]), feed = String(tvgID[tvgID.index(after: at)...])
        return id.isEmpty || feed.isEmpty ? nil : (id, feed)
    }

    /// N of a `PlusN` feed (1 to 48), else nil.
    static func plusHours(_ feed: String) -> Int? {
        guard feed.count > 4, feed.prefix(4).lowercased() == "plus", feed.count <= 6 else { return nil }
        guard let n = Int(feed.dropFirst(4)), n >= 1, n <= M3UPlaylist.maxShiftHours else { return nil }
        return n
    }

    public func match(_ entry: PlaylistEntry) -> PlaylistMatch {
        func matched(_ id: String, _ reason: String, extra: Int64 = 0) -> PlaylistMatch {
            // Both are bounded by `maxShiftHours`: no overflow.
            PlaylistMatch(entry: entry, channel: id, shift: extra + entry.shift,
                          reason: reason + (entry.shift != 0 ? ", tvg-shift \(Self.hours(entry.shift))" : ""), nearest: [])
        }
        if let tvgID = entry.tvgID {
            if let (id, how) = canonical(tvgID) { return matched(id, "tvg-id is \(how)") }
            if let (base, feed) = Self.feed(tvgID), Self.plusHours(feed) == nil, let (id, how) = canonical(base) {
                return matched(id, "tvg-id \(tvgID) is feed \(feed) of \(how)")
            }
        }
        var candidates: [(field: String, value: String)] = []
        if let tvgID = entry.tvgID { candidates.append(("tvg-id", tvgID)) }
        if let tvgName = entry.tvgName { candidates.append(("tvg-name", tvgName)) } else if !entry.title.isEmpty { candidates.append(("name", entry.title)) }
        for (field, value) in candidates {
            let key = ChannelNameKey(value)
            if !key.isEmpty, let (id, name) = byName[key] {
                return matched(id, "\(field) '\(value)' = display name '\(name)' of \(id)")
            }
        }
        if let tvgID = entry.tvgID, let (base, feed) = Self.feed(tvgID), let hours = Self.plusHours(feed), let (id, how) = canonical(base) {
            return matched(id, "tvg-id \(tvgID): the guide has no channel of its own for it, so \(id) (\(how)) moved \(hours) h later", extra: Int64(hours) * 3600)
        }
        return PlaylistMatch(entry: entry, channel: nil, shift: entry.shift, reason: "no channel has this id, alias or name",
                             nearest: nearest(to: candidates.map(\.value)))
    }

    /// The three display names nearest to any of `values`, nearest first (ties by name).
    func nearest(to values: [String]) -> [String] {
        let keys = values.map { ChannelNameKey($0) }.filter { !$0.isEmpty }
        guard !keys.isEmpty else { return [] }
        var best: [String: Int] = [:]
        for (key, name) in names {
            let d = keys.map { key.distance(to: $0) }.min() ?? Int.max
            if let known = best[name], known <= d { continue }
            best[name] = d
        }
        return best.sorted { ($0.value, $0.key) < ($1.value, $1.key) }.prefix(3).map(\.key)
    }

    static func hours(_ seconds: Int64) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let m = seconds.magnitude
        return m % 3600 == 0 ? "\(sign)\(m / 3600) h" : "\(sign)\(m / 3600) h \(m % 3600 / 60) min"
    }
}

/// A channel of the guide written for a playlist: under the playlist's id, in playlist order.
public struct PlaylistChannel: Sendable, Hashable {
    /// The id the player knows: the entry's `tvg-id`; for an entry without one, the matched
    /// channel's id, else its name.
    public var outputID: String
    /// The entry's name (shown first), then the matched channel's display names.
    public var name: String
    public var logo: String?
    /// The canonical id whose programmes it gets; nil for an unmatched entry (placeholders only).
    public var channel: String?
    public var shift: Int64
    /// Lines of the entries it stands for (several streams of one channel are one channel).
    public var lines: [Int]
}

/// The channels of a playlist's guide from its matches, in playlist order; entries sharing an
/// output id are one channel (the first entry that matched gives its match).
public func playlistChannels(_ matches: [PlaylistMatch]) -> [PlaylistChannel] {
    var channels: [PlaylistChannel] = []
    var index: [String: Int] = [:]
    for m in matches {
        let outputID = m.entry.tvgID ?? m.channel ?? m.entry.name
        guard !outputID.isEmpty else { continue }
        if let i = index[outputID] {
            channels[i].lines.append(m.entry.line)
            if channels[i].channel == nil, let channel = m.channel {
                channels[i].channel = channel
                channels[i].shift = m.shift
            }
            if channels[i].logo == nil { channels[i].logo = m.entry.tvgLogo }
            continue
        }
        index[outputID] = channels.count
        channels.append(PlaylistChannel(outputID: outputID, name: m.entry.name, logo: m.entry.tvgLogo, channel: m.channel, shift: m.shift,
                                        lines: [m.entry.line]))
    }
    return channels
}
