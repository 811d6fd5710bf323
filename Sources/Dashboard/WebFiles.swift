import Foundation
import Hummingbird

/// The web page's files (Sources/Dashboard/Web: our own HTML, JavaScript and CSS, no build step) and Chart.js from
/// Debian's libjs-chart.js. Read from disk at each request: they are small, and an edited page shows on reload.
struct WebFiles: Sendable {
    /// The folder holding index.html, or nil when none was found (the page then says where it looked).
    let root: String?
    let searched: [String]
    let chartJS: String

    init(root configured: String?, chartJS: String) {
        // SwiftPM copies the folder next to the executables as BeaconTracker_Dashboard.resources/Web; an installed
        // hub has it in /usr/share/beacontracker/web (docs/dashboard.md). Bundle.module is not used: it stops the
        // process when the build folder is gone.
        // The running binary's own path (/proc/self/exe on Linux), not argv[0]: a hub started through PATH has only
        // its name there.
        let executable = (Bundle.main.executableURL ?? URL(fileURLWithPath: "."))
            .resolvingSymlinksInPath().deletingLastPathComponent()
        var candidates: [String] = []
        if let configured { candidates.append(configured) }
        candidates += [
            executable.appendingPathComponent("BeaconTracker_Dashboard.resources/Web").path,
            executable.deletingLastPathComponent().appendingPathComponent("BeaconTracker_Dashboard.resources/Web")
                .path,
            "/usr/share/beacontracker/web",
        ]
        self.searched = candidates
        self.root = candidates.first { FileManager.default.fileExists(atPath: "\($0)/index.html") }
        self.chartJS = chartJS
    }

    static let types = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
    ]

    func response(for file: String) throws -> Response {
        guard let root, let data = FileManager.default.contents(atPath: "\(root)/\(file)") else {
            throw APIError(
                .notFound, "no-web-page",
                "the dashboard's page is not installed: looked in \(searched.joined(separator: ", ")); set "
                    + "http.webRoot in hub.yaml to the folder holding index.html")
        }
        let type = Self.types[(file as NSString).pathExtension] ?? "application/octet-stream"
        return Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    func chartResponse() throws -> Response {
        guard let data = FileManager.default.contents(atPath: chartJS) else {
            throw APIError(
                .notFound, "no-chart-js",
                "Chart.js is not at \(chartJS): install Debian's libjs-chart.js (scripts/setup.sh does) or set "
                    + "http.chartJS in hub.yaml")
        }
        return Response(
            status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "max-age=86400"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
