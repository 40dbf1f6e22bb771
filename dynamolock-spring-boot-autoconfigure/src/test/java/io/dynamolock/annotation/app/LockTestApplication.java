package io.dynamolock.annotation.app;

import io.dynamolock.core.LockAttempt;
import io.dynamolock.core.LockHandle;
import io.dynamolock.core.LockListener;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The application of the {@code @SpringBootTest}s: the services in this package, an H2
 * database with Spring's JDBC transaction manager (Boot's own transaction auto-configuration
 * enables {@code @Transactional}), and DynamoDB Local through {@code dynamolock.dynamodb.*}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@ComponentScan
public class LockTestApplication {

    @Bean
    DataSource dataSource() {
        return new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2).generateUniqueName(true).build();
    }

    @Bean
    JdbcTransactionManager transactionManager(DataSource dataSource) {
        return new JdbcTransactionManager(dataSource);
    }

    @Bean
    JdbcTemplate jdbcTemplate(DataSource dataSource) {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        jdbc.execute("create table account (id varchar(64) primary key, balance int not null)");
        return jdbc;
    }

    /** Bean referred to from an entity expression. */
    @Bean
    LockKeys lockKeys() {
        return new LockKeys();
    }

    /** Whether a transaction was active on the thread when each entity's lock was last granted. */
    @Bean
    AcquireProbe acquireProbe() {
        return new AcquireProbe();
    }

    public static class LockKeys {

        public String sku(String sku) {
            return "sku-" + sku.toLowerCase();
        }
    }

    public static class AcquireProbe implements LockListener {

        private final Map<String, Boolean> transactionActive = new ConcurrentHashMap<>();

        @Override
        public void onAcquired(LockAttempt attempt, LockHandle lock, Duration waited) {
            transactionActive.put(lock.entity(), TransactionSynchronizationManager.isActualTransactionActive());
        }

        public Boolean transactionActiveWhenAcquired(String entity) {
            return transactionActive.get(entity);
        }
    }
}
