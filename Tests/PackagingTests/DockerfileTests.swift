import Foundation
import Testing

/// The Dockerfile's structure (no Docker engine runs here): two stages on the named images, the
/// build stage running scripts/setup's commands, a non-root runtime with volumes and a health check.
@Suite struct DockerfileTests {
    struct Instruction {
        var keyword: String
        var arguments: String
    }

    /// Instructions with continuation lines joined and comments dropped, split into stages.
    static func stages() throws -> [[Instruction]] {
        var logical: [String] = [], pending = ""
        for raw in try repoFile("Dockerfile").split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") { continue }
            if line.hasSuffix("\\") { pending += line.dropLast() + " "; continue }
            pending += line
            if !pending.trimmingCharacters(in: .whitespaces).isEmpty { logical.append(pending) }
            pending = ""
        }
        var stages: [[Instruction]] = []
        for line in logical {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            let instruction = Instruction(keyword: parts[0].uppercased(),
                                          arguments: parts.count > 1 ? parts[1].split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ") : "")
            if instruction.keyword == "FROM" { stages.append([]) }
            if stages.isEmpty { continue }
            stages[stages.count - 1].append(instruction)
        }
        return stages
    }

    @Test func twoStagesOnTheOfficialImages() throws {
        let stages = try Self.stages()
        try #require(stages.count == 2)
        #expect(stages[0][0].arguments == "swift:6.3-bookworm AS build")
        #expect(stages[1][0].arguments == "debian:bookworm-slim")
    }

    /// The build stage runs what scripts/setup runs, in order, minus the final sample run.
    @Test func theBuildStageRunsTheSetupCommands() throws {
        let setup = try repoFile("scripts/setup").split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") && !$0.hasPrefix("set ") && !$0.hasPrefix("cd ") }
        try #require(setup.last?.hasPrefix(".build/release/tvimport") == true, "scripts/setup should end with the sample run: \(setup)")
        let expected = Array(setup.dropLast())
        #expect(expected == ["scripts/install-deps --build", "swift build -c release --static-swift-stdlib"])
        let runs = try Self.stages()[0].filter { $0.keyword == "RUN" }.map(\.arguments)
        #expect(Array(runs.prefix(expected.count)) == expected)
    }

    @Test func theRuntimeStageInstallsOnlyTheRuntimeLibraries() throws {
        let runtime = try Self.stages()[1]
        let install = runtime.filter { $0.keyword == "RUN" && $0.arguments.contains("apt-get install") }
        try #require(install.count == 1)
        let words = install[0].arguments.split(separator: " ").map(String.init)
        let afterInstall = words.drop { $0 != "install" }.dropFirst().prefix { $0 != "&&" }
        let packages = Set(afterInstall.filter { !$0.hasPrefix("-") })
        let needed: Set = ["libcurl4", "libxml2", "libsqlite3-0", "libjemalloc2", "ca-certificates", "tzdata"]
        #expect(needed.isSubset(of: packages))
        // Plus what the schedule needs (tini as PID 1), nothing else.
        #expect(packages.subtracting(needed) == ["tini"])
        #expect(install[0].arguments.contains("--no-install-recommends"))
        #expect(install[0].arguments.contains("rm -rf /var/lib/apt/lists/*"))
    }

    @Test func theRuntimeIsNonRootWithVolumesEnvAndHealthCheck() throws {
        let runtime = try Self.stages()[1]
        let users = runtime.filter { $0.keyword == "USER" }.map(\.arguments)
        try #require(!users.isEmpty)
        #expect(!["root", "0", "0:0", "root:root"].contains(users.last!))
        let volumes = runtime.filter { $0.keyword == "VOLUME" }.map(\.arguments).joined(separator: " ")
        for path in ["/data", "/config", "/feeds"] { #expect(volumes.contains("\"\(path)\""), "VOLUME \(path)") }
        let env = runtime.filter { $0.keyword == "ENV" }.map(\.arguments).joined(separator: " ")
        for setting in ["TVIMPORT_DB=/data/tvimport.sqlite", "TVIMPORT_OUTPUT=/feeds", "TVIMPORT_CACHE=/data/cache"] {
            #expect(env.split(separator: " ").contains { $0 == setting }, "ENV \(setting)")
        }
        let health = runtime.filter { $0.keyword == "HEALTHCHECK" }
        try #require(health.count == 1)
        #expect(health[0].arguments.contains("tvimport-healthcheck"))
        #expect(runtime.contains { $0.keyword == "COPY" && $0.arguments == "Schedules/healthcheck /usr/local/bin/tvimport-healthcheck" })
        #expect(runtime.contains { $0.keyword == "ENTRYPOINT" && $0.arguments.contains("tini") })
    }

    /// The binaries (tvimport and the tvimport-serve it execs, side by side), its resources in /usr/local/share/tvimport (where it looks: ../share/tvimport
    /// from the binary), the man page and the completions.
    @Test func theImageGetsTheBinaryItsResourcesAndDocs() throws {
        let build = try Self.stages()[0].filter { $0.keyword == "RUN" }.map(\.arguments).joined(separator: "\n")
        #expect(build.contains("cp .build/release/tvimport .build/release/tvimport-serve /staging/bin/"))
        #expect(build.contains("cp Sources/Job/Resources/* /staging/share/tvimport/"))
        #expect(build.contains("cp docs/tvimport.1 /staging/share/man/man1/"))
        #expect(build.contains("cp docs/completions/tvimport.bash /staging/share/bash-completion/completions/tvimport"))
        #expect(FileManager.default.fileExists(atPath: repoRoot.appendingPathComponent("Sources/Job/Resources/sample-guide.xml").path))
        let runtime = try Self.stages()[1]
        #expect(runtime.contains { $0.keyword == "COPY" && $0.arguments == "--from=build /staging/bin/ /usr/local/bin/" })
        #expect(runtime.contains { $0.keyword == "COPY" && $0.arguments == "--from=build /staging/share/ /usr/local/share/" })
    }

    /// Every file the Dockerfile copies from the context exists, and .dockerignore keeps it in.
    @Test func copiedFilesAreInTheBuildContext() throws {
        let ignored = try repoFile(".dockerignore").split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        for copy in try Self.stages().joined().filter({ $0.keyword == "COPY" && !$0.arguments.hasPrefix("--from") }) {
            let sources = copy.arguments.split(separator: " ").dropLast().map(String.init)
            for source in sources where source != "." {
                #expect(FileManager.default.fileExists(atPath: repoRoot.appendingPathComponent(source).path), "COPY \(source): missing")
                #expect(!ignored.contains { source == $0 || source.hasPrefix($0 + "/") }, "COPY \(source): excluded by .dockerignore")
            }
        }
        for needed in ["Package.swift", "Sources", "Tests", "scripts", "Schedules", "docs", "Plugins"] {
            #expect(!ignored.contains(needed), "\(needed) is needed by the build stage")
        }
        #expect(ignored.contains(".build"), "a local .build must not leak into the image build")
    }
}
