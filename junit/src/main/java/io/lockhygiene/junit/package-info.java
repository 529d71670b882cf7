/** The JUnit 5 extension that fails a test which leaks an advisory lock or breaks a LockHygiene rule. */
package io.lockhygiene.junit;
