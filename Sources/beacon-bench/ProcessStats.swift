import Foundation

/// CPU time and memory of a running process, from /proc.
enum ProcessStats {
    /// User + system CPU time, in clock ticks (`sysconf(_SC_CLK_TCK)` per second).
    static func cpuTicks(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // Fields after the command: state(0) … utime(11) stime(12).
        return (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
    }

    /// Resident memory now (`VmRSS`) or its peak (`VmHWM`), MiB.
    static func rssMiB(_ pid: Int32, field: String = "VmRSS") -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
        else { return 0 }
        return (Double(line.split(separator: " ")[1]) ?? 0) / 1024
    }
}
