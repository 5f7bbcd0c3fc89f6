// swift-tools-version:6.0
// The tvimport package. The pipeline reads off the targets, in the order the nightly job runs:
// Fetch (or Grabber) -> XMLTV -> Merge (over ObjectGraph, with the Listings model) -> Feeds (ICalendar) -> Job -> tvimport.
import PackageDescription

let package = Package(
    name: "tvimport",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "tvimport", targets: ["tvimport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
    ],
    targets: [
        // C libraries, each behind one small shim.
        // CLibXML2 also holds zlib, with which the XMLTV reader inflates gzip itself.
        .systemLibrary(name: "CLibXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev", "zlib1g-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),

        // A small Core Data for Linux: entity model built from modules, SQLite store, contexts,
        // change notifications and the model-driven diff.
        .target(name: "ObjectGraph", dependencies: [
            .product(name: "GRDB", package: "GRDB.swift"),
            // The C API, only to bind bulk-insert values without GRDB's generic argument boxing.
            .product(name: "GRDBSQLite", package: "GRDB.swift"),
        ]),

        // Streaming XMLTV reader on libxml2 (no Foundation: see PLATFORM-NOTES, ICU clash).
        // libxml2 calls back for every element and text run; the callbacks touch only the reader's
        // own state, so Swift's run-time exclusivity checks there are pure cost (a tenth of it).
        .target(name: "XMLTV", dependencies: ["CLibXML2"], swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"])]),

        // The tvimport entity model (listings + local modules) and the XMLTV -> object mapping.
        .target(name: "Listings", dependencies: ["ObjectGraph", "XMLTV"]),

        // The generic sorted two-cursor merge (find-update-or-create-or-remove) and the XMLTV import.
        .target(name: "Merge", dependencies: ["ObjectGraph", "XMLTV", "Listings"]),

        // Polite downloads on libcurl: conditional GET, retries, limits.
        .target(name: "Fetch", dependencies: ["CCurl"]),

        // Command sources (grabbers): a process group per command, its time limit, its standard error.
        // CSpawn holds the C calls Swift's Glibc does not import (chdir in posix_spawn, pipe2, prctl).
        .target(name: "CSpawn"),
        .target(name: "Grabber", dependencies: ["CSpawn"]),

        // RFC 5545 / RFC 7986 text writer.
        .target(name: "ICalendar"),

        // Feeds: one .ics per channel plus filtered feeds, written incrementally and atomically.
        .target(name: "Feeds", dependencies: ["ICalendar", "ObjectGraph", "Listings"]),

        // The nightly job and the other commands, as a library the CLI and the tests share.
        .target(name: "Job", dependencies: [
            "ObjectGraph", "XMLTV", "Listings", "Merge", "Fetch", "Feeds", "Grabber",
            .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "Logging", package: "swift-log"),
        ], resources: [.copy("Resources")]),

        .executableTarget(name: "tvimport", dependencies: [
            "Job",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], plugins: ["VersionStamp"]),
        // `git describe` at build time, for --version.
        .plugin(name: "VersionStamp", capability: .buildTool()),

        .testTarget(name: "ObjectGraphTests", dependencies: ["ObjectGraph"]),
        .testTarget(name: "XMLTVTests", dependencies: ["XMLTV"]),
        .testTarget(name: "MergeTests", dependencies: ["Merge", "Listings", "ObjectGraph", "XMLTV"]),
        .testTarget(name: "FetchTests", dependencies: ["Fetch"], exclude: ["Fixtures"]),
        .testTarget(name: "GrabberTests", dependencies: ["Grabber"]),
        .testTarget(name: "ICalendarTests", dependencies: ["ICalendar"], exclude: ["Fixtures"]),
        .testTarget(name: "FeedsTests", dependencies: ["Feeds", "Merge", "Listings", "ObjectGraph"]),
        .testTarget(name: "JobTests", dependencies: ["Job", "ObjectGraph"], exclude: ["Fixtures"]),
        // The schedules, the container and the generated docs (checked with the real tools).
        .testTarget(name: "PackagingTests", dependencies: []),
        // Crash consistency, hostile inputs and the fuzz corpus, against the built binary.
        .testTarget(name: "ReliabilityTests", dependencies: [], exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
