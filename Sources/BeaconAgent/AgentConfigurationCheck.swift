import BeaconConfig
import BeaconStore

/// `beacon-agent check`: agent.yaml and the files it names, checked as `beacon-agent run` checks them at start-up
/// (the same functions), but without starting anything — no broker connection, no outbox opened or created, no
/// scanning — and collecting every problem rather than stopping at the first.
public enum AgentConfigurationCheck {
    /// The report on `configFile`: its summary, or its problems.
    public static func run(configFile: String) -> ConfigCheckReport {
        var report = ConfigCheckReport(file: configFile)
        guard let configuration = AgentConfiguration.read(from: configFile, problems: &report.problems) else {
            return report
        }
        report.problems += startUpProblems(configuration, configFile: configFile)
        report.summary = summary(configuration)
        return report
    }

    /// What `buildAgent` would refuse beyond `AgentConfiguration.load`: the MQTT password and TLS files, the outbox's
    /// location.
    static func startUpProblems(_ configuration: AgentConfiguration, configFile: String) -> [ConfigError] {
        var problems: [ConfigError] = []
        do {
            _ = try configuration.mqtt.readPassword(configFile: configFile)
        } catch {
            problems.append(error)
        }
        problems += configuration.mqtt.tlsProblems(configFile: configFile)
        if let problem = StoreDatabase.locationProblem(configuration.outbox.path) {
            problems.append(ConfigError(.invalidValue, file: configFile, key: "outbox.path", problem.message))
        }
        return problems
    }

    static func summary(_ configuration: AgentConfiguration) -> [ConfigCheckReport.Line] {
        typealias Line = ConfigCheckReport.Line
        let outbox = configuration.outbox
        let scanner = configuration.scanner
        return [
            Line("gateway", "\(configuration.gateway), site \(configuration.site)"),
            Line(
                "broker",
                configuration.mqtt.brokerSummary
                    + ", client \(configuration.mqtt.clientId ?? "agent-\(configuration.gateway)")"),
            Line(
                "regions",
                configuration.regions.isEmpty
                    ? "none: every beacon is published" : ConfigCheckReport.list(configuration.regions.map(\.id))),
            Line(
                "outbox",
                "\(outbox.path) (at most \(ConfigCheckReport.bytes(outbox.maxBytes)) and "
                    + "\(ConfigCheckReport.number(outbox.maxAgeHours)) h)"),
            Line(
                "scanner",
                "\(scanner.adapter), \(scanner.active ? "active" : "passive"), "
                    + "window \(ConfigCheckReport.number(scanner.windowMs))/\(ConfigCheckReport.number(scanner.intervalMs)) ms"
            ),
        ]
    }
}
