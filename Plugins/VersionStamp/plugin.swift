import Foundation
import PackagePlugin

/// Writes `GitVersion.swift` (`let gitDescribe = "…"`) from `git describe` before each build of the
/// target, so that `tvimport --version` names the commit it was built from. The file is rewritten
/// only when the description changes, so an unchanged tree does not recompile the target.
@main
struct VersionStamp: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("GitVersion")
        let script = """
            mkdir -p "$2"
            d=$(git -C "$1" describe --tags --always --dirty 2>/dev/null || echo unknown)
            new="let gitDescribe = \\"$d\\""
            [ "$(cat "$2/GitVersion.swift" 2>/dev/null)" = "$new" ] || printf '%s\\n' "$new" > "$2/GitVersion.swift"
            """
        return [.prebuildCommand(displayName: "Stamping the version from git describe",
                                 executable: URL(fileURLWithPath: "/bin/sh"),
                                 arguments: ["-c", script, "sh", context.package.directoryURL.path, output.path],
                                 outputFilesDirectory: output)]
    }
}
