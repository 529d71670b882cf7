package io.lockhygiene.internal.leak;

/**
 * One advisory lock as pg_locks lists it for our backend. A bigint key is split by PostgreSQL into
 * classid (high 32 bits) and objid (low 32 bits) with objsubid 1; two int keys are classid and objid
 * with objsubid 2.
 */
public final class HeldLock {
    private final long classid;
    private final long objid;
    private final int objsubid;
    private final String mode;
    private final int backendPid;
    private final int count;

    public HeldLock(long classid, long objid, int objsubid, String mode, int backendPid) {
        this(classid, objid, objsubid, mode, backendPid, 1);
    }

    public HeldLock(long classid, long objid, int objsubid, String mode, int backendPid, int count) {
        this.classid = classid & 0xFFFFFFFFL;
        this.objid = objid & 0xFFFFFFFFL;
        this.objsubid = objsubid;
        this.mode = mode;
        this.backendPid = backendPid;
        this.count = count;
    }

    /** How many times the session held it (stacked), as the leak check counted while releasing it. */
    public int count() {
        return count;
    }

    /** One row of {@link PgLocks#LIST} or {@link PgLocks#LIST_AND_RELEASE} (pg_locks shows a stacked lock once: count 1). */
    public static HeldLock fromListing(java.sql.ResultSet row) throws java.sql.SQLException {
        return new HeldLock(row.getLong(1), row.getLong(2), row.getInt(3), row.getString(4), row.getInt(5), 1);
    }

    public boolean isBigintKey() {
        return objsubid == 1;
    }

    /** The bigint key (meaningful when {@link #isBigintKey()}). */
    public long bigintKey() {
        return (classid << 32) | objid;
    }

    public int firstIntKey() {
        return (int) classid;
    }

    public int secondIntKey() {
        return (int) objid;
    }

    /** "42" or "(7742, -1020110405)", as the key would be written in SQL. */
    public String key() {
        return isBigintKey() ? Long.toString(bigintKey()) : "(" + firstIntKey() + ", " + secondIntKey() + ")";
    }

    /** ExclusiveLock or ShareLock. */
    public String mode() {
        return mode;
    }

    public boolean isShared() {
        return "ShareLock".equals(mode);
    }

    public int backendPid() {
        return backendPid;
    }

    /** True when the literal argument text of a call names this key ("42", " 7742 , 5 "). */
    public boolean matchesLiteralArguments(String argumentText) {
        String[] parts = argumentText.split(",", -1);
        try {
            if (parts.length == 1 && isBigintKey()) {
                return Long.parseLong(parts[0].trim()) == bigintKey();
            }
            if (parts.length == 2 && !isBigintKey()) {
                return Integer.parseInt(parts[0].trim()) == firstIntKey()
                        && Integer.parseInt(parts[1].trim()) == secondIntKey();
            }
        } catch (NumberFormatException notALiteral) {
            return false;
        }
        return false;
    }

    @Override
    public String toString() {
        return "advisory lock " + key() + " (" + mode + ")";
    }
}
