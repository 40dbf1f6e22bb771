package io.dynamolock.starter;

import io.dynamolock.annotation.QueueLocked;
import io.dynamolock.core.LockInfo;
import io.dynamolock.core.LockTemplate;
import java.util.List;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Service;

/** The README's quick start: the starter, application.yml and an annotated method, no other code. */
@SpringBootApplication
public class QuickStartApplication {

    @Service
    public static class OrderService {

        private final LockTemplate locks;

        public OrderService(LockTemplate locks) {
            this.locks = locks;
        }

        @QueueLocked(entity = "#orderId", maxWait = "10s")
        public List<LockInfo> addItem(String orderId, String item) {
            return locks.activeLocks();
        }
    }
}
