// swift-tools-version:6.0
// The tvimport package. The pipeline reads off the targets, in the order the nightly job runs:
// Fetch (or Grabber) -> XMLTV -> XMLTVImport (Merge over ObjectGraph, into the Listings model) -> Feeds (ICalendar), XMLTVExport -> Publish -> Job -> TVImportCommands -> tvimport.
import PackageDescription

let package = Package(
    name: "tvimport",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "tvimport", targets: ["tvimport"]),
        // `tvimport serve` execs this one, so the nightly commands never map Hummingbird and NIO.
        .executable(name: "tvimport-serve", targets: ["tvimport-serve"]),
        // For other packages: the object graph on SQLite, and the streaming XMLTV reader.
        .library(name: "ObjectGraph", targets: ["ObjectGraph"]),
        .library(name: "XMLTV", targets: ["XMLTV"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        // `swift package generate-documentation --target ObjectGraph` (or `--target XMLTV`): the
        // library products' DocC catalogs, Sources/ObjectGraph/ObjectGraph.docc and Sources/XMLTV/XMLTV.docc.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", exact: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        // Already under Hummingbird (the same version): serve's blocking reads go to its NIOThreadPool.
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
    ],
    targets: [
        // C libraries, each behind one small shim.
        // CLibXML2 also holds zlib, with which the XMLTV reader inflates gzip itself.
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev", "zlib1g-dev"])]),
        // zlib for gzip output (Sources/Primitives/Gzip.swift); CLibXML2's copy stays inside the reader.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // OpenSSL's libcrypto, which libcurl already links: MD5 and SHA-256 for object storage.
        .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // libc calls Swift's Glibc module leaves out (syncfs is declared only under _GNU_SOURCE).
        .systemLibrary(name: "CLinuxCalls"),

        // Written once, used everywhere, no Foundation: UTC instants and civil dates, FNV-1a,
        // durable file replacement.
        .target(name: "Primitives", dependencies: ["CLinuxCalls", "CZlib"]),

        // A small Core Data for Linux: entity model built from modules, SQLite store, contexts,
        // change notifications and the model-driven diff.
        .target(name: "ObjectGraph", dependencies: [
            "Primitives",
            .product(name: "GRDB", package: "GRDB.swift"),
            // The C API, only to bind bulk-insert values without GRDB's generic argument boxing.
            .product(name: "GRDBSQLite", package: "GRDB.swift"),
            "CSQLiteSettings",
        ]),
        // The sqlite3_config call Swift cannot make (variadic): memory statistics off.
        .target(name: "CSQLiteSettings", linkerSettings: [.linkedLibrary("sqlite3")]),

        // Streaming XMLTV reader on libxml2 (no Foundation: libxml2's and Foundation's ICU headers
        // clash, see docs/design.md#platform-notes). Run-time exclusivity checks stay on: without
        // them a first import took 0.25 % fewer instructions (callgrind), not worth an unsafe flag
        // that would keep every other package from depending on this one.
        .target(name: "XMLTV", dependencies: ["CLibXML2", "Primitives"]),

        // The tvimport entity model (listings + local modules).
        .target(name: "Listings", dependencies: ["ObjectGraph"]),

        // The generic sorted two-cursor merge (find-update-or-create-or-remove) and its input: no TV.
        .target(name: "Merge", dependencies: ["ObjectGraph", "Primitives"]),

        // The XMLTV -> model import: staging, the XMLTV -> object mapping, the contract's scope.
        .target(name: "XMLTVImport", dependencies: ["ObjectGraph", "XMLTV", "Listings", "Merge", "Primitives"]),

        // Polite downloads on libcurl: conditional GET, retries, limits. Its CurlSession is the one
        // libcurl setup, which Publish uses too.
        .target(name: "Fetch", dependencies: ["CCurl", "Primitives"]),

        // Command sources (grabbers): a process group per command, its time limit, its standard error.
        // CSpawn holds the C calls Swift's Glibc does not import (chdir in posix_spawn, pipe2, prctl).
        .target(name: "CSpawn"),
        .target(name: "Grabber", dependencies: ["CSpawn"]),

        // RFC 5545 / RFC 7986 text writer.
        .target(name: "ICalendar", dependencies: ["Primitives"]),

        // Feeds: one .ics per channel plus filtered feeds, written incrementally and atomically,
        // with stable programme UIDs.
        .target(name: "Feeds", dependencies: ["ICalendar", "ObjectGraph", "Listings", "Primitives"]),

        // Publishing the feeds to S3-compatible object storage, signed by libcurl (SigV4), paced like downloads.
        .target(name: "Publish", dependencies: ["CCurl", "CLibCrypto", "Fetch", "Primitives"]),

        // M3U playlists of IPTV players, and matching their entries to the guide's channels.
        .target(name: "Playlists", dependencies: ["Primitives"]),

        // The stored guide as one XMLTV file, for media servers (streamed, atomic, gzip on request);
        // the guide of a playlist's channels. Rows read from the object graph, bytes written
        // directly: no XMLTV reader, no import.
        .target(name: "XMLTVExport", dependencies: ["ObjectGraph", "Playlists", "Primitives"]),

        // The nightly job and the other commands, as a library the CLI and the tests share.
        .target(name: "Job", dependencies: [
            "ObjectGraph", "XMLTV", "Listings", "Merge", "XMLTVImport", "Fetch", "Grabber", "Feeds", "Primitives", "Publish", "XMLTVExport", "Playlists",
            .product(name: "Logging", package: "swift-log"),
        ], resources: [.copy("Resources")]),

        // `tvimport serve`: the feeds, the guide and the model-generated interface over HTTP.
        .target(name: "Serve", dependencies: [
            "Job", "ObjectGraph", "Listings", "Feeds", "Fetch", "Primitives",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "NIOPosix", package: "swift-nio"),
            // HTTP/1.0 and Connection: close (ConnectionPersistence.swift): NIO's HTTP/1 heads,
            // before Hummingbird turns them into version-less HTTPTypes. Both already under Hummingbird.
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
        ]),

        // The options and exit handling both executables share (no server code: tvimport parses
        // `serve`'s options with them before it execs tvimport-serve).
        .target(name: "CommandLineOptions", dependencies: [
            "Job",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // The command line's commands (TVImport and its subcommands), a face on Job: parsed and
        // run in process by the tests as swift-argument-parser tests its own commands.
        .target(name: "TVImportCommands", dependencies: [
            "Job", "CommandLineOptions", "Grabber",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], plugins: ["VersionStamp"]),

        // The command line: `TVImport.main()`. It does not link Serve: a smaller binary maps fewer
        // pages at start (peak RSS of import, run and export; docs/design.md#targets).
        .executableTarget(name: "tvimport", dependencies: ["TVImportCommands"],
        // jemalloc (Debian's libjemalloc-dev) in place of glibc's malloc: an import allocates and
        // frees millions of small objects across three threads; measured in README.md#dependencies.
        linkerSettings: [.linkedLibrary("jemalloc")]),
        // The server `tvimport serve` execs, installed beside tvimport.
        .executableTarget(name: "tvimport-serve", dependencies: [
            "Serve", "Job", "CommandLineOptions",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // `git describe` at build time, for --version.
        .plugin(name: "VersionStamp", capability: .buildTool()),

        // What every test target shares, and their only home: ../shared and tool lookups, the
        // subprocess runner and running processes, guide text from values, the guide generator,
        // the feed parsers and the command-line parse checks.
        // ParseAssertions.swift: swift-argument-parser's test helpers are not a product, so the
        // checks it makes of its own commands are written there.
        .target(name: "TestSupport", dependencies: [
            "Primitives", .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], path: "Tests/TestSupport"),
        .testTarget(name: "PrimitivesTests", dependencies: ["Primitives", "TestSupport"]),
        .testTarget(name: "ObjectGraphTests", dependencies: ["ObjectGraph", "Primitives", "Merge", "TestSupport"]),
        .testTarget(name: "XMLTVTests", dependencies: ["XMLTV", "Primitives", "TestSupport"]),
        .testTarget(name: "MergeTests", dependencies: ["Merge", "XMLTVImport", "Listings", "ObjectGraph", "XMLTV", "Primitives", "TestSupport"]),
        .testTarget(name: "FetchTests", dependencies: ["Fetch", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "GrabberTests", dependencies: ["Grabber"]),
        .testTarget(name: "ICalendarTests", dependencies: ["ICalendar", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "FeedsTests", dependencies: ["Feeds", "Merge", "XMLTVImport", "Listings", "ObjectGraph", "Primitives", "TestSupport"]),
        .testTarget(name: "JobTests", dependencies: ["Job", "ObjectGraph", "Playlists", "TestSupport"], exclude: ["Fixtures"]),
        // Publishing against moto's S3 server on loopback, checked with boto3 (both from .venv).
        .testTarget(name: "PublishTests", dependencies: ["Publish", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "ServeTests", dependencies: ["Serve", "Job", "ObjectGraph", "Feeds", "Primitives", "XMLTV", "TestSupport", .product(name: "HummingbirdTesting", package: "hummingbird")], exclude: ["browser_check.py", "guide_check.py", "image_server.py"]),
        .testTarget(name: "XMLTVExportTests", dependencies: ["XMLTVExport", "Playlists", "Merge", "XMLTVImport", "Listings", "ObjectGraph", "XMLTV", "Primitives", "TestSupport"]),
        // Every command's flags, defaults, conflicts and bad values, parsed in process.
        .testTarget(name: "TVImportCommandsTests", dependencies: [
            "TVImportCommands", "CommandLineOptions", "Job", "TestSupport",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // The schedules, the container and the generated docs (checked with the real tools).
        .testTarget(name: "PackagingTests", dependencies: ["TestSupport"]),
        // Crash consistency, hostile inputs and the fuzz corpus, against the built binary.
        .testTarget(name: "ReliabilityTests", dependencies: ["TestSupport"], exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
