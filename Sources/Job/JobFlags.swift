/// What `run` and `import` share from the command line (their `ImportFlags`): preview, force, the
/// report's form and how much it says. One value, from the parsed flags through the job to the
/// pipeline (`PipelineOptions.flags`).
///
/// ```swift
/// var job = ImportJob(database: "tv.sqlite", files: ["guide.xml"])
/// job.flags = JobFlags(dryRun: true, json: true)
/// ```
public struct JobFlags: Sendable, Equatable {
    /// Do everything up to the commit, report what would change, change nothing.
    public var dryRun: Bool
    /// Ignore HTTP validators and the safety guard.
    public var force: Bool
    /// The report as one JSON document (`--format json`) instead of text.
    public var json: Bool
    /// Print nothing on success (a failure is still one line on stderr).
    public var quiet: Bool
    /// List every change and every warning with its file and line.
    public var verbose: Bool

    public init(dryRun: Bool = false, force: Bool = false, json: Bool = false, quiet: Bool = false, verbose: Bool = false) {
        self.dryRun = dryRun
        self.force = force
        self.json = json
        self.quiet = quiet
        self.verbose = verbose
    }

    /// Whether the imports keep every change (a report that lists them) or only count them.
    var collectsChanges: Bool { dryRun || json || verbose }
    /// Whether the text report lists the changes.
    var showsChanges: Bool { dryRun || verbose }
    /// Whether progress may be drawn on stderr (a terminal's only; never beside a document or with --quiet).
    var showsProgress: Bool { !quiet && !json }
}
