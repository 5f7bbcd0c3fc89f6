/// What `tvimport --version` prints: the package's version and the commit it was built from
/// (`gitDescribe` is written at build time by Plugins/VersionStamp).
enum BuildVersion {
    static let package = "0.5.0"
    static var description: String { "tvimport \(package) (\(gitDescribe))" }
}
