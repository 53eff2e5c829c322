/// The iBeacon identity an agent advertises, so that agents hear each other (for calibration) and phones can
/// range the boards.
///
/// The site UUID, the agent's floor as major, and a minor derived from the agent's id by a stable 16-bit hash
/// (FNV-1a over the id's UTF-8 bytes, folded to 16 bits). Agents and the locator compute it the same way, so
/// the locator knows which agent a heard agent beacon is, from the map alone.
public enum AgentBeacon {
    /// The minor an agent with this id advertises.
    public static func minor(forAgentID id: String) -> UInt16 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in id.utf8 {
            hash ^= UInt32(byte)
            hash &*= 0x0100_0193
        }
        return UInt16(truncatingIfNeeded: hash >> 16) ^ UInt16(truncatingIfNeeded: hash)
    }

    /// The identity an agent advertises.
    public static func identity(site: BeaconUUID, floor: UInt16, agentID: String) -> TagIdentity {
        .iBeacon(uuid: site, major: floor, minor: minor(forAgentID: agentID))
    }

}
