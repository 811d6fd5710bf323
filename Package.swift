// swift-tools-version: 6.1
import Foundation
import PackageDescription

/// CI (`.ci/run`) sets BEACONTRACKER_WERROR=1: our own targets then build with warnings as errors, while dependencies
/// keep their warnings. Swift 6 language mode everywhere.
let warningsAsErrors = ProcessInfo.processInfo.environment["BEACONTRACKER_WERROR"] == "1"
let swiftSettings: [SwiftSetting] =
    [.swiftLanguageMode(.v6)] + (warningsAsErrors ? [.unsafeFlags(["-warnings-as-errors"])] : [])
let cSettings: [CSetting] = warningsAsErrors ? [.unsafeFlags(["-Werror", "-Wall"])] : []
/// The targets that compute (the model's geometry, the zone engine, the simulator) are optimized in debug builds too:
/// unoptimized, one test of thirty simulated museum minutes took 239 s, and the tests and the debug programs the
/// end-to-end tests run spent most of CI's time there. BEACONTRACKER_ONONE=1 builds them unoptimized, for a debugger.
let computeSettings: [SwiftSetting] =
    swiftSettings
    + (ProcessInfo.processInfo.environment["BEACONTRACKER_ONONE"] == "1"
        ? [] : [.unsafeFlags(["-O"], .when(configuration: .debug))])

let package = Package(
    name: "BeaconTracker",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "beacon-agent", targets: ["beacon-agent"]),
        .executable(name: "beacon-hub", targets: ["beacon-hub"]),
        .executable(name: "beacon-sim", targets: ["beacon-sim"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
    ],
    targets: [
        // Executables: parse arguments, load configuration, call the wiring library.
        .executableTarget(
            name: "beacon-agent",
            dependencies: [
                "BeaconAgent",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "beacon-hub",
            dependencies: [
                "BeaconHub", "BeaconMQTT", "ZoneInference", "Dashboard",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "beacon-sim",
            dependencies: [
                "BeaconModel", "BeaconConfig", "Simulator", "SimulatorService",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),

        // Benchmarks (`make bench`): figures beside a same-run baseline; not shipped.
        .executableTarget(
            name: "beacon-bench",
            dependencies: [
                "BeaconMQTT", "BeaconModel", "BeaconDecoding", "BrokerTestSupport", "BeaconConfig", "ZoneInference",
                "BeaconHub", "BeaconStore", "BeaconPostgres", "Simulator", "CBenchParse",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // A plain C parse of the same HCI events: the yardstick of `beacon-bench instructions` (not shipped).
        .target(name: "CBenchParse", cSettings: cSettings),

        // Domain types and the MQTT contract's payloads: no dependencies.
        .target(name: "BeaconModel", swiftSettings: computeSettings),

        // Pure decoding: AD structures, beacon frames, HCI advertising reports, btsnoop captures.
        .target(name: "BeaconDecoding", dependencies: ["BeaconModel"], swiftSettings: swiftSettings),

        // The zone engine: RSSI filters, HMM zone inference, calibration profiles (pure; clock passed in).
        .target(name: "ZoneInference", dependencies: ["BeaconModel"], swiftSettings: computeSettings),

        // The venue simulator: radio model, movement, ground truth, scoring (pure; clock and seed passed in).
        .target(name: "Simulator", dependencies: ["BeaconModel", "ZoneInference"], swiftSettings: computeSettings),

        // Wiring: the simulator playing its gateways live through the agent's own path (beacon-sim run --mqtt).
        .target(
            name: "SimulatorService",
            dependencies: [
                "Simulator", "BeaconAgent", "BeaconConfig", "BeaconDecoding", "BeaconModel",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // Strict YAML configuration loading shared by the three programs.
        .target(
            name: "BeaconConfig",
            dependencies: ["BeaconModel", "BeaconMQTT", .product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings
        ),

        // C libraries, each imported by exactly one Swift target (checked by scripts/check-c-imports.sh).
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .target(
            name: "CBluetooth",
            cSettings: cSettings,
            linkerSettings: [.linkedLibrary("bluetooth")]
        ),

        // Adapters.
        .target(
            name: "BeaconMQTT",
            dependencies: [
                "CMosquitto",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "BLEScanner",
            dependencies: ["CBluetooth", "BeaconModel", "BeaconDecoding"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "BeaconStore",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // The shared history in PostgreSQL (store.backend: postgres): the only importer of PostgresNIO.
        .target(
            name: "BeaconPostgres",
            dependencies: [
                "BeaconStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // The hub's HTTP side: JSON API, live stream, /metrics and /health, and the web page (Web/, served as is).
        .target(
            name: "Dashboard",
            dependencies: [
                "BeaconModel", "BeaconStore", "ZoneInference",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Web")],
            swiftSettings: swiftSettings
        ),

        // Wiring: configuration types and build functions returning services.
        .target(
            name: "BeaconAgent",
            dependencies: [
                "BeaconModel", "BeaconConfig", "BeaconMQTT", "BeaconDecoding", "BeaconStore", "BLEScanner",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "BeaconHub",
            dependencies: [
                "BeaconModel", "BeaconConfig", "BeaconMQTT", "BeaconDecoding", "BeaconStore", "BeaconPostgres",
                "ZoneInference", "Dashboard",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // Test support: a real mosquitto broker on a free loopback port.
        .target(
            name: "BrokerTestSupport",
            dependencies: ["BeaconMQTT"],
            path: "Tests/Support",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "BeaconModelTests", dependencies: ["BeaconModel"], swiftSettings: swiftSettings),
        .testTarget(
            name: "BeaconConfigTests",
            dependencies: ["BeaconConfig", "BeaconAgent", "BeaconHub", "ZoneInference"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BeaconMQTTTests",
            dependencies: ["BeaconMQTT", "BrokerTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "BLEScannerTests", dependencies: ["BLEScanner", "BeaconDecoding"], swiftSettings: swiftSettings),
        .testTarget(
            name: "BeaconDecodingTests", dependencies: ["BeaconDecoding", "BeaconAgent"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ZoneInferenceTests", dependencies: ["ZoneInference", "BeaconModel", "BeaconConfig", "Simulator"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "BeaconStoreTests", dependencies: ["BeaconStore", "BeaconPostgres", "BrokerTestSupport"],
            swiftSettings: swiftSettings),
        // The fuzzer's corpus and crashes replayed (scripts/fuzz.sh; Tests/Fuzz is not a target).
        .testTarget(
            name: "FuzzRegressionTests", dependencies: ["BeaconModel", "BeaconDecoding"], swiftSettings: swiftSettings),
        .testTarget(
            name: "BeaconHubTests",
            dependencies: [
                "BeaconHub", "BeaconModel", "BeaconConfig", "BeaconMQTT", "BeaconStore", "ZoneInference", "Simulator",
                // IntegrationsTests: the hub against a real mosquitto, webhooks against a live HTTP receiver.
                "BrokerTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "DashboardTests",
            dependencies: [
                "Dashboard", "BeaconModel", "BeaconStore", "BeaconConfig", "ZoneInference", "BrokerTestSupport",
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "SimulatorTests", dependencies: ["Simulator", "BeaconModel", "BeaconConfig", "ZoneInference"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "BeaconModel", "BeaconMQTT", "BeaconDecoding", "BeaconStore", "BeaconPostgres", "BrokerTestSupport",
                "Simulator", "BeaconAgent", "BLEScanner", "BeaconConfig",
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
