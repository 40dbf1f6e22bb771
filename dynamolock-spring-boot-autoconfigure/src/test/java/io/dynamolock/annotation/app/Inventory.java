package io.dynamolock.annotation.app;

import io.dynamolock.annotation.QueueLocked;
import io.dynamolock.core.LockInfo;
import java.util.List;

/** {@code @QueueLocked} declared on an interface method. */
public interface Inventory {

    @QueueLocked(entity = "'stock-' + #sku")
    List<LockInfo> count(String sku);
}
