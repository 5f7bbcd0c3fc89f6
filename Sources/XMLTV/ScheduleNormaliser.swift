import Primitives

// One channel's programmes -> sorted, de-duplicated, with stops filled or repaired, overlaps reported.

/// What the normaliser needs of a programme: its place in the schedule, and its content only for
/// messages and for telling exact duplicates from conflicting ones.
public protocol ScheduledProgramme: Sendable {
    /// Start, in UTC seconds since 1970.
    var start: Int64 { get }
    /// Stop, in UTC seconds; nil when unknown (the normaliser fills it in where it can).
    var stop: Int64? { get set }
    /// The `i` of `clumpidx="i/n"`.
    var clumpIndex: Int { get }
    /// The `n` of `clumpidx="i/n"`.
    var clumpCount: Int { get }
    /// The line of the `<programme>` start tag, for messages.
    var line: Int { get }
    /// The first title, for messages.
    var firstTitle: String? { get }
    /// Whether both say the same (where in the file they were aside).
    func hasSameContent(as other: Self) -> Bool
}

extension XMLTVProgramme: ScheduledProgramme {
    /// The first `<title>`, for messages.
    public var firstTitle: String? { titles.first?.text }

    /// Whether both are equal but for where they were read (line and hash).
    public func hasSameContent(as other: XMLTVProgramme) -> Bool {
        var a = self
        a.line = other.line
        a.sourceHash = other.sourceHash
        return a == other
    }
}

extension ProgrammeRecord: ScheduledProgramme {
    /// Whether both hold the same element (decoded and compared only when their bytes differ).
    public func hasSameContent(as other: ProgrammeRecord) -> Bool {
        sourceHash == other.sourceHash && tape == other.tape || decoded().hasSameContent(as: other.decoded())
    }
}

/// One channel's programmes made into a schedule: sorted by start, exact duplicates dropped,
/// missing stops filled from the next start and impossible ones repaired, overlaps and conflicting
/// duplicates reported as `XMLTVWarning`s.
///
/// ```swift
/// let (schedule, warnings) = ScheduleNormaliser.normalise(programmes, channel: "bbc1.uk")
/// ```
public enum ScheduleNormaliser {
    /// `programmes` may come in any order; they are taken as belonging to `channel`.
    // Specialised for the records an import reads (called across modules, it would otherwise
    // run generic: every copy and comparison through witness tables).
    @_specialize(where P == ProgrammeRecord)
    public static func normalise<P: ScheduledProgramme>(_ programmes: [P], channel: String)
        -> (programmes: [P], warnings: [XMLTVWarning]) {
        var warnings: [XMLTVWarning] = []
        let shownChannel = channel.excerpt()
        func warn(_ kind: String, _ message: String, _ p: P) {
            warnings.append(XMLTVWarning(kind: kind, message: message, line: p.line, channel: shownChannel))
        }

        // Identity is (start, clumpIndex); document order (line) decides which copy wins.
        let sorted = programmes.sorted {
            ($0.start, $0.clumpIndex, $0.line) < ($1.start, $1.clumpIndex, $1.line)
        }
        var unique: [P] = []
        unique.reserveCapacity(sorted.count)
        var index = 0
        while index < sorted.count {
            var end = index + 1
            while end < sorted.count, sorted[end].start == sorted[index].start,
                  sorted[end].clumpIndex == sorted[index].clumpIndex { end += 1 }
            let winner = sorted[end - 1]
            for loser in sorted[index..<(end - 1)] {
                if loser.hasSameContent(as: winner) {
                    warn("duplicate", "duplicate of \(describe(winner, channel: shownChannel)) (line \(winner.line)) dropped", loser)
                } else {
                    warn("conflicting-duplicate",
                         "\(describe(loser, channel: shownChannel)) replaced by a later programme with the same start: \(describe(winner, channel: shownChannel)) (line \(winner.line))",
                         loser)
                }
            }
            unique.append(winner)
            index = end
        }

        // Stops: the next different start bounds what a missing or broken stop can be.
        var nextStart: Int64? = nil
        var i = unique.count - 1
        var followingStart: Int64? = nil   // start of the group after the current start group
        while i >= 0 {
            if i + 1 < unique.count, unique[i + 1].start != unique[i].start { followingStart = unique[i + 1].start }
            nextStart = followingStart
            var p = unique[i]
            if let stop = p.stop, stop < p.start {
                let repaired = stop + 86_400
                if repaired > p.start, nextStart.map({ repaired <= $0 }) ?? true {
                    warn("repaired-stop", "stop \(UTCTime.iso8601(stop)) before start of \(describe(p, channel: shownChannel)): read as the next day", p)
                    p.stop = repaired
                } else {
                    warn("dropped-stop", "stop \(UTCTime.iso8601(stop)) before start of \(describe(p, channel: shownChannel)) ignored", p)
                    p.stop = nil
                }
            }
            if p.stop == nil {
                if let nextStart {
                    p.stop = nextStart
                } else {
                    warn("missing-stop", "\(describe(p, channel: shownChannel)) has no stop time and none can be inferred", p)
                }
            }
            unique[i] = p
            i -= 1
        }

        // Overlaps, like tv_sort: each programme against the one before it, intervals half-open,
        // members of one clump (same start, clumpCount > 1) exempt.
        if unique.count > 1 {
            for k in 1..<unique.count {
                let previous = unique[k - 1], current = unique[k]
                guard let previousStop = previous.stop, previousStop > current.start else { continue }
                if previous.start == current.start, previous.clumpCount > 1, current.clumpCount > 1 { continue }
                warn("overlap", "\(describe(previous, channel: shownChannel)) (line \(previous.line)) overlaps \(describe(current, channel: shownChannel))", current)
            }
        }
        return (unique, warnings)
    }

    /// "RTE2.ie 2001-12-28T11:31:00Z 'Title' (until 2001-12-28T12:00:00Z)": the programme's identity
    /// (channel and start, in UTC) as a person reads it, then what tells it apart from its neighbours.
    static func describe<P: ScheduledProgramme>(_ p: P, channel: String) -> String {
        let title = p.firstTitle?.excerpt() ?? "(untitled)"
        let stop = p.stop.map { " (until \(UTCTime.iso8601($0)))" } ?? ""
        return "\(channel) \(UTCTime.iso8601(p.start)) '\(title)'\(stop)"
    }
}
