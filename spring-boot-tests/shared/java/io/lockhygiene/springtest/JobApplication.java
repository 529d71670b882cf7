package io.lockhygiene.springtest;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A plain Spring Boot application: HikariCP and JdbcTemplate from Boot, LockHygiene from the starter. */
@SpringBootApplication
public class JobApplication {
}
