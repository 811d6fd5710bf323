import BrokerTestSupport
import Foundation
import Testing

/// The ports test brokers and databases listen on: none may be one the kernel hands out meanwhile.
@Suite
struct FreePortTests {
    /// A CI run failed when mosquitto's port came from the ephemeral range and another test's server on port 0 had
    /// taken it in between ("Address already in use").
    @Test func portsForListenersLieOutsideTheKernelsEphemeralRangeAndAreNeverRepeated() throws {
        let text = try String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        let bounds = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        try #require(bounds.count == 2)
        let ephemeral = bounds[0]...bounds[1]
        let ports = try (0..<300).map { _ in try FreePort.find() }
        #expect(ports.filter { ephemeral.contains($0) } == [])
        #expect(Set(ports).count == ports.count)
        #expect(ports.allSatisfy { (1024...65535).contains($0) && !FreePort.accepts(port: $0) })
    }
}
