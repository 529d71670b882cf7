package io.lockhygiene.bench;

/**
 * A Statement that does nothing, so a benchmark measures only the layer in front of it. Generated from
 * java.sql.Statement's method list.
 */
@SuppressWarnings("deprecation")
public final class NoopStatement implements java.sql.Statement {
    private final java.sql.Connection connection;

    public NoopStatement(java.sql.Connection connection) {
        this.connection = connection;
    }

    @Override
    public <T> T unwrap(java.lang.Class<T> a0) throws java.sql.SQLException {
        return null;
    }

    @Override
    public boolean isWrapperFor(java.lang.Class<?> a0) throws java.sql.SQLException {
        return false;
    }

    @Override
    public void close() throws java.sql.SQLException {
        
    }

    @Override
    public java.sql.ResultSet executeQuery(java.lang.String a0) throws java.sql.SQLException {
        return null;
    }

    @Override
    public int executeUpdate(java.lang.String a0) throws java.sql.SQLException {
        return 0;
    }

    @Override
    public int getMaxFieldSize() throws java.sql.SQLException {
        return 0;
    }

    @Override
    public void setMaxFieldSize(int a0) throws java.sql.SQLException {
        
    }

    @Override
    public int getMaxRows() throws java.sql.SQLException {
        return 0;
    }

    @Override
    public void setMaxRows(int a0) throws java.sql.SQLException {
        
    }

    @Override
    public void setEscapeProcessing(boolean a0) throws java.sql.SQLException {
        
    }

    @Override
    public int getQueryTimeout() throws java.sql.SQLException {
        return 0;
    }

    @Override
    public void setQueryTimeout(int a0) throws java.sql.SQLException {
        
    }

    @Override
    public void cancel() throws java.sql.SQLException {
        
    }

    @Override
    public java.sql.SQLWarning getWarnings() throws java.sql.SQLException {
        return null;
    }

    @Override
    public void clearWarnings() throws java.sql.SQLException {
        
    }

    @Override
    public void setCursorName(java.lang.String a0) throws java.sql.SQLException {
        
    }

    @Override
    public boolean execute(java.lang.String a0) throws java.sql.SQLException {
        return false;
    }

    @Override
    public java.sql.ResultSet getResultSet() throws java.sql.SQLException {
        return null;
    }

    @Override
    public int getUpdateCount() throws java.sql.SQLException {
        return 0;
    }

    @Override
    public boolean getMoreResults() throws java.sql.SQLException {
        return false;
    }

    @Override
    public void setFetchDirection(int a0) throws java.sql.SQLException {
        
    }

    @Override
    public int getFetchDirection() throws java.sql.SQLException {
        return 0;
    }

    @Override
    public void setFetchSize(int a0) throws java.sql.SQLException {
        
    }

    @Override
    public int getFetchSize() throws java.sql.SQLException {
        return 0;
    }

    @Override
    public int getResultSetConcurrency() throws java.sql.SQLException {
        return 0;
    }

    @Override
    public int getResultSetType() throws java.sql.SQLException {
        return 0;
    }

    @Override
    public void addBatch(java.lang.String a0) throws java.sql.SQLException {
        
    }

    @Override
    public void clearBatch() throws java.sql.SQLException {
        
    }

    @Override
    public int[] executeBatch() throws java.sql.SQLException {
        return new int[0];
    }

    @Override
    public java.sql.Connection getConnection() throws java.sql.SQLException {
        return connection;
    }

    @Override
    public boolean getMoreResults(int a0) throws java.sql.SQLException {
        return false;
    }

    @Override
    public java.sql.ResultSet getGeneratedKeys() throws java.sql.SQLException {
        return null;
    }

    @Override
    public int executeUpdate(java.lang.String a0, int a1) throws java.sql.SQLException {
        return 0;
    }

    @Override
    public int executeUpdate(java.lang.String a0, int[] a1) throws java.sql.SQLException {
        return 0;
    }

    @Override
    public int executeUpdate(java.lang.String a0, java.lang.String[] a1) throws java.sql.SQLException {
        return 0;
    }

    @Override
    public boolean execute(java.lang.String a0, int a1) throws java.sql.SQLException {
        return false;
    }

    @Override
    public boolean execute(java.lang.String a0, int[] a1) throws java.sql.SQLException {
        return false;
    }

    @Override
    public boolean execute(java.lang.String a0, java.lang.String[] a1) throws java.sql.SQLException {
        return false;
    }

    @Override
    public int getResultSetHoldability() throws java.sql.SQLException {
        return 0;
    }

    @Override
    public boolean isClosed() throws java.sql.SQLException {
        return false;
    }

    @Override
    public void setPoolable(boolean a0) throws java.sql.SQLException {
        
    }

    @Override
    public boolean isPoolable() throws java.sql.SQLException {
        return false;
    }

    @Override
    public void closeOnCompletion() throws java.sql.SQLException {
        
    }

    @Override
    public boolean isCloseOnCompletion() throws java.sql.SQLException {
        return false;
    }

    @Override
    public long getLargeUpdateCount() throws java.sql.SQLException {
        return 0;
    }

    @Override
    public void setLargeMaxRows(long a0) throws java.sql.SQLException {
        
    }

    @Override
    public long getLargeMaxRows() throws java.sql.SQLException {
        return 0;
    }

    @Override
    public long[] executeLargeBatch() throws java.sql.SQLException {
        return new long[0];
    }

    @Override
    public long executeLargeUpdate(java.lang.String a0) throws java.sql.SQLException {
        return 0;
    }

    @Override
    public long executeLargeUpdate(java.lang.String a0, int a1) throws java.sql.SQLException {
        return 0;
    }

    @Override
    public long executeLargeUpdate(java.lang.String a0, int[] a1) throws java.sql.SQLException {
        return 0;
    }

    @Override
    public long executeLargeUpdate(java.lang.String a0, java.lang.String[] a1) throws java.sql.SQLException {
        return 0;
    }

    @Override
    public java.lang.String enquoteLiteral(java.lang.String a0) throws java.sql.SQLException {
        return null;
    }

    @Override
    public java.lang.String enquoteIdentifier(java.lang.String a0, boolean a1) throws java.sql.SQLException {
        return null;
    }

    @Override
    public boolean isSimpleIdentifier(java.lang.String a0) throws java.sql.SQLException {
        return false;
    }

    @Override
    public java.lang.String enquoteNCharLiteral(java.lang.String a0) throws java.sql.SQLException {
        return null;
    }
}
