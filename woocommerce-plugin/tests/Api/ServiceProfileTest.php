<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Api;

use ServicePay\WooCommerce\Api\ConnectionProblem;
use ServicePay\WooCommerce\Api\ServiceProfile;
use ServicePay\WooCommerce\Tests\WordPressTestCase;

/**
 * What the shop makes of the service's list of currencies (read from the real service in the integration run),
 * and how it names a failed connection.
 *
 * @group wordpress
 */
final class ServiceProfileTest extends WordPressTestCase {

	/** @var mixed */
	private $saved;

	protected function setUp(): void {
		parent::setUp();
		$this->saved = get_option( ServiceProfile::OPTION, null );
		delete_option( ServiceProfile::OPTION );
	}

	protected function tearDown(): void {
		null === $this->saved ? delete_option( ServiceProfile::OPTION ) : update_option( ServiceProfile::OPTION, $this->saved );
		parent::tearDown();
	}

	public function test_a_list_never_read_offers_nothing(): void {
		$this->assertNull( ServiceProfile::currencies( 'test' ) );
		$this->assertSame( 'unknown', ServiceProfile::refusal( 'test', 'USD', '25.00' ) );
	}

	public function test_currencies_and_bounds_as_the_service_lists_them(): void {
		ServiceProfile::remember(
			'test',
			array(
				'merchantName' => 'Shop',
				'currencies'   => array(
					array( 'currency' => 'ngn', 'minAmount' => 100, 'maxAmount' => 10000000000 ),
					array( 'currency' => 'USD', 'minAmount' => 50, 'maxAmount' => 100000000 ),
					'not an entry',
				),
			)
		);
		$this->assertSame( array( 'NGN', 'USD' ), array_keys( ServiceProfile::currencies( 'test' ) ?? array() ) );
		$this->assertSame( '', ServiceProfile::refusal( 'test', 'USD' ) );
		$this->assertSame( '', ServiceProfile::refusal( 'test', 'usd', '0.50' ) );
		$this->assertSame( '', ServiceProfile::refusal( 'test', 'USD', '1000000.00' ) );
		$this->assertSame( 'amount', ServiceProfile::refusal( 'test', 'USD', '0.49' ) );
		$this->assertSame( 'amount', ServiceProfile::refusal( 'test', 'USD', '1000000.01' ) );
		$this->assertSame( 'currency', ServiceProfile::refusal( 'test', 'EUR', '25.00' ) );
		// One environment's list says nothing of the other's.
		$this->assertSame( 'unknown', ServiceProfile::refusal( 'live', 'USD' ) );
	}

	public function test_a_failed_connection_is_named_in_plain_words(): void {
		$this->assertSame( 'nothing accepted the connection', ConnectionProblem::describe( 'cURL error 7: Failed to connect to 127.0.0.1 port 9: Connection refused' ) );
		$this->assertSame( 'the host name could not be found', ConnectionProblem::describe( 'cURL error 6: Could not resolve host: nowhere.invalid' ) );
		$this->assertSame( 'it did not answer in time', ConnectionProblem::describe( 'cURL error 28: Operation timed out after 10001 milliseconds' ) );
		$this->assertSame( 'the secure (HTTPS) connection could not be made', ConnectionProblem::describe( 'cURL error 60: SSL certificate problem' ) );
		$this->assertSame( 'the connection failed', ConnectionProblem::describe( 'something else' ) );
	}
}
